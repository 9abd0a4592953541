package settings

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// LoadOptions say where Load reads. The zero value reads the process
// environment, no flags, and the default settings file.
type LoadOptions struct {
	// File names the settings file, which must then exist. "": --config,
	// then $DURABLE_AGENT_CONFIG, then <dataDir>/settings.yaml if it exists.
	File string
	// Flags is a parsed flag set (see AddFlags); only flags the user set
	// count. nil: no flags.
	Flags *pflag.FlagSet
	// Env looks up environment variables; nil: os.LookupEnv. It lets tests
	// inject an environment. An empty variable counts as unset.
	Env func(string) (string, bool)
	// Environ lists the environment as "NAME=value" for the check that
	// rejects unknown DURABLE_AGENT_ variables. nil: os.Environ when Env is
	// nil, and no check when Env is set.
	Environ func() []string
	// OtherEnv names further DURABLE_AGENT_ variables the program reads that
	// are not settings, so they are not reported as unknown.
	OtherEnv []string
	// NoDefaultFile reads no settings file unless File or --config names
	// one: neither <dataDir>/settings.yaml nor $DURABLE_AGENT_CONFIG. The
	// demo runs with its own settings this way, whatever a user persisted
	// (set-auto-retry off writes retry.enabled: false there).
	NoDefaultFile bool
}

func (o LoadOptions) environment() environment {
	if o.Env == nil {
		e := osEnv()
		if o.Environ != nil {
			e.environ = o.Environ
		}
		return e
	}
	return environment{lookup: o.Env, environ: o.Environ}
}

// layerValue is one key's value in the environment or flag layer.
type layerValue struct {
	raw    rawValue
	source string
	// name is the environment variable that gave the value.
	name string
	flag *pflag.Flag
}

// temporalEnv are the Temporal CLI's standard variables; the
// DURABLE_AGENT_ variable of the same key wins.
var temporalEnv = map[string]string{
	"temporal.address":   "TEMPORAL_ADDRESS",
	"temporal.namespace": "TEMPORAL_NAMESPACE",
}

// Load reads the settings: defaults, then the settings file, then the
// environment, then flags, each later source winning key by key. Every
// source is checked strictly before it is merged, and the result is checked
// with Validate; the first problem is returned as an *Error.
func Load(opts LoadOptions) (Settings, error) {
	s, _, err := loadWithOrigins(opts)
	return s, err
}

// loadWithOrigins is Load that also says where each key's value came from.
func loadWithOrigins(opts LoadOptions) (Settings, map[string]Origin, error) {
	e := opts.environment()
	if err := checkUnknownEnv(e, opts.OtherEnv); err != nil {
		return Settings{}, nil, err
	}
	envVals, err := readEnv(e)
	if err != nil {
		return Settings{}, nil, err
	}
	flagVals, err := readFlags(opts.Flags)
	if err != nil {
		return Settings{}, nil, err
	}
	defaults := defaultsFor(e)

	path, namedBy, dirSource := locateFile(opts, e, envVals, flagVals, defaults.DataDir)
	file, err := readLayerFile(opts, path, namedBy, dirSource)
	if err != nil {
		return Settings{}, nil, err
	}

	v, err := mergeLayers(&defaults, file, envVals, flagVals)
	if err != nil {
		return Settings{}, nil, err
	}

	s := defaults
	source := map[string]string{}
	origins := map[string]Origin{}
	for i := range schema {
		k := &schema[i]
		val, p := k.convert(rawFrom(v.Get(k.key)))
		if p != nil { // each layer was checked, so this is a bug here
			return Settings{}, nil, p.err("merged settings")
		}
		k.set(&s, val)
		source[k.key] = winnerSource(k.key, file, envVals, flagVals)
		origins[k.key] = winnerOrigin(k.key, file, envVals, flagVals, e)
	}
	s.DataDir = absPath(expandHome(s.DataDir, e))
	if s.Codec.KeyFile != "" {
		s.Codec.KeyFile = absPath(expandHome(s.Codec.KeyFile, e))
	}
	s.file = path
	if err := s.Validate(); err != nil {
		var se *Error
		if errors.As(err, &se) && se.p != nil && source[se.p.base()] != "" {
			return Settings{}, nil, se.p.err(source[se.p.base()])
		}
		return Settings{}, nil, err
	}
	return s, origins, nil
}

// readLayerFile reads the settings file Load uses: path, named by namedBy
// ("" for the default file, which may be missing). A default or
// $DURABLE_AGENT_CONFIG file is not read with opts.NoDefaultFile.
func readLayerFile(opts LoadOptions, path, namedBy, dirSource string) (*fileLayer, error) {
	empty := &fileLayer{path: path, values: map[string]fileValue{}}
	if opts.NoDefaultFile && (namedBy == "" || namedBy == "environment "+EnvConfig) {
		return empty, nil
	}
	if namedBy == "" {
		// The default file sits in the data dir; say "dataDir is a file"
		// rather than "cannot read <file>/settings.yaml".
		dir := filepath.Dir(path)
		if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
			return nil, (&problem{key: "dataDir", value: dir, reason: "must be a directory, not a file"}).err(dirSource)
		}
	}
	file, err := readFile(path)
	switch {
	case err == nil:
		return file, nil
	case namedBy == "" && isNotExist(err):
		return empty, nil
	case isNotExist(err):
		return nil, &Error{Key: "file", Value: path, Source: namedBy,
			msg: fmt.Sprintf("settings: settings file %s (from %s) does not exist", path, namedBy), err: err}
	}
	return nil, err
}

// mergeLayers hands the checked raw values to viper, which layers them.
// The environment goes into the config layer after the file, because viper
// reads only the process environment and Load's must be injectable; flags
// stay on top.
func mergeLayers(defaults *Settings, file *fileLayer, envVals, flagVals map[string]layerValue) (*viper.Viper, error) {
	v := viper.New()
	fileMap, envMap := map[string]any{}, map[string]any{}
	for i := range schema {
		k := &schema[i]
		if k.kind == kindList {
			v.SetDefault(k.key, splitList(k.text(k.field(defaults))))
		} else {
			v.SetDefault(k.key, k.text(k.field(defaults)))
		}
		if fv, ok := file.values[k.key]; ok {
			setNested(fileMap, k.key, rawAny(fv.raw))
		}
		if lv, ok := envVals[k.key]; ok {
			setNested(envMap, k.key, rawAny(lv.raw))
		}
		if lv, ok := flagVals[k.key]; ok {
			if err := v.BindFlagValue(k.key, rawFlag{lv.flag}); err != nil {
				return nil, fmt.Errorf("settings: bind flag --%s: %w", lv.flag.Name, err)
			}
		}
	}
	if err := v.MergeConfigMap(fileMap); err != nil {
		return nil, fmt.Errorf("settings: merge %s: %w", file.path, err)
	}
	if err := v.MergeConfigMap(envMap); err != nil {
		return nil, fmt.Errorf("settings: merge environment: %w", err)
	}
	return v, nil
}

// readEnv checks every key's variable that is set.
func readEnv(e environment) (map[string]layerValue, error) {
	out := map[string]layerValue{}
	for i := range schema {
		k := &schema[i]
		name := k.env()
		text, ok := e.get(name)
		if !ok {
			if alt := temporalEnv[k.key]; alt != "" {
				name = alt
				text, ok = e.get(alt)
			}
		}
		if !ok {
			continue
		}
		raw := rawValue{text: text}
		if _, p := k.convert(raw); p != nil {
			return nil, p.err("environment " + name)
		}
		out[k.key] = layerValue{raw: raw, source: "environment " + name, name: name}
	}
	return out, nil
}

// checkUnknownEnv rejects DURABLE_AGENT_ variables that name no key: a
// typo there would otherwise be ignored in silence. Values are not shown.
func checkUnknownEnv(e environment, other []string) error {
	if e.environ == nil {
		return nil
	}
	known := map[string]bool{EnvHome: true, EnvConfig: true, EnvCodecKey: true}
	var candidates []string
	for i := range schema {
		known[schema[i].env()] = true
		candidates = append(candidates, strings.TrimPrefix(schema[i].env(), EnvPrefix))
	}
	for _, n := range other {
		known[n] = true
	}
	var unknown []string
	for _, kv := range e.environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, EnvPrefix) && !known[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	name := unknown[0]
	msg := fmt.Sprintf("settings: unknown environment variable %s", name)
	if s := suggest(strings.TrimPrefix(name, EnvPrefix), candidates); s != "" {
		msg += " (did you mean " + EnvPrefix + s + "?)"
	}
	return &Error{Key: name, Source: "environment " + name, msg: msg}
}

// readFlags checks every key's flag the user set.
func readFlags(fs *pflag.FlagSet) (map[string]layerValue, error) {
	out := map[string]layerValue{}
	if fs == nil {
		return out, nil
	}
	for i := range schema {
		k := &schema[i]
		f := fs.Lookup(k.flag())
		if f == nil || !f.Changed {
			continue
		}
		raw := rawValue{text: f.Value.String()}
		if _, p := k.convert(raw); p != nil {
			return nil, p.err("flag --" + f.Name)
		}
		out[k.key] = layerValue{raw: raw, source: "flag --" + f.Name, flag: f}
	}
	return out, nil
}

// locateFile picks the settings file and says what named it ("" for the
// default file, which may be missing) and, for the default file, what
// chose its data dir ("" for the built-in default).
func locateFile(opts LoadOptions, e environment, envVals, flagVals map[string]layerValue, defDataDir string) (path, namedBy, dirSource string) {
	fix := func(p string) string { return absPath(expandHome(p, e)) }
	if opts.File != "" {
		return fix(opts.File), "LoadOptions.File", ""
	}
	if opts.Flags != nil {
		if f := opts.Flags.Lookup(ConfigFlag); f != nil && f.Changed && f.Value.String() != "" {
			return fix(f.Value.String()), "flag --" + ConfigFlag, ""
		}
	}
	if p, ok := e.get(EnvConfig); ok {
		return fix(p), "environment " + EnvConfig, ""
	}
	// The file cannot move itself: only a flag or the environment decide
	// which data dir holds it.
	dir := defDataDir
	if _, ok := e.get(EnvHome); ok {
		dirSource = "environment " + EnvHome
	}
	if lv, ok := envVals["dataDir"]; ok {
		dir, dirSource = lv.raw.text, lv.source
	}
	if lv, ok := flagVals["dataDir"]; ok {
		dir, dirSource = lv.raw.text, lv.source
	}
	return fix(filepath.Join(dir, FileName)), "", dirSource
}

// winnerSource says which layer gave key its value, mirroring viper's
// precedence, so merged-value errors can name it.
func winnerSource(key string, file *fileLayer, envVals, flagVals map[string]layerValue) string {
	if lv, ok := flagVals[key]; ok {
		return lv.source
	}
	if lv, ok := envVals[key]; ok {
		return lv.source
	}
	if fv, ok := file.values[key]; ok {
		return fmt.Sprintf("%s:%d", file.path, fv.line)
	}
	return ""
}

// rawFlag hands viper a flag's text untouched: viper's own conversion of
// typed flags (cast.ToInt) turns bad input into 0.
type rawFlag struct{ f *pflag.Flag }

func (r rawFlag) HasChanged() bool    { return r.f.Changed }
func (r rawFlag) Name() string        { return r.f.Name }
func (r rawFlag) ValueString() string { return r.f.Value.String() }
func (r rawFlag) ValueType() string   { return "string" }

func rawAny(r rawValue) any {
	if r.seq {
		return append([]string{}, r.items...)
	}
	return r.text
}

func splitList(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ";")
}

// setNested stores v at a dotted key in nested maps, viper's config shape.
func setNested(m map[string]any, key string, v any) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[p] = sub
		}
		m = sub
	}
	m[parts[len(parts)-1]] = v
}
