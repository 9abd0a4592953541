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

// val is one key's value, parsed by convert when its layer was read, and
// where it came from. viper layers vals; the winner carries its origin.
type val struct {
	v any
	o Origin
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

// Source says where Load(opts) takes key's value from: "flag --name",
// "environment NAME", "<file>:<line>", or "" when the built-in default
// applies. Programs use it to tell a value chosen on purpose from a
// default, e.g. the worker's opt-in to the scripted model outside --dev.
func Source(opts LoadOptions, key string) (string, error) {
	if lookupKey(key) == nil {
		return "", fmt.Errorf("settings: unknown key %q", key)
	}
	_, origins, err := loadWithOrigins(opts)
	return origins[key].source(), err
}

// loadWithOrigins is Load that also says where each key's value came
// from. Each layer is read and parsed once (environment and flags first,
// so their errors come first, then the file the data dir holds), and viper
// layers the parsed values: defaults (SetDefault), the file, then the
// environment (MergeConfigMap, in that order), then flags (Set, viper's top
// layer). viper's own environment layer reads only the process
// environment, and its flag layer hands back the flag's text, so neither
// can carry an injected or strictly parsed value.
func loadWithOrigins(opts LoadOptions) (Settings, map[string]Origin, error) {
	e := opts.environment()
	if err := checkUnknownEnv(e, opts.OtherEnv); err != nil {
		return Settings{}, nil, err
	}
	env, err := readLayer(func(k *keyDef) (string, Origin, bool) {
		name := k.env()
		text, ok := e.get(name)
		if alt := temporalEnv[k.key]; !ok && alt != "" {
			name = alt
			text, ok = e.get(alt)
		}
		return text, Origin{Kind: OriginEnv, From: name}, ok
	})
	if err != nil {
		return Settings{}, nil, err
	}
	flags, err := readLayer(func(k *keyDef) (string, Origin, bool) {
		if opts.Flags == nil {
			return "", Origin{}, false
		}
		f := opts.Flags.Lookup(k.flag())
		if f == nil || !f.Changed {
			return "", Origin{}, false
		}
		return f.Value.String(), Origin{Kind: OriginFlag, From: "--" + f.Name}, true
	})
	if err != nil {
		return Settings{}, nil, err
	}
	defaults := defaultsFor(e)
	path, namedBy, dirSource := locateFile(opts, e, env, flags, defaults.DataDir)
	file, err := readLayerFile(opts, path, namedBy, dirSource)
	if err != nil {
		return Settings{}, nil, err
	}

	v := viper.New()
	for i := range schema {
		k := &schema[i]
		o := Origin{Kind: OriginDefault}
		if _, ok := e.get(EnvHome); ok && k.key == "dataDir" {
			o = Origin{Kind: OriginEnv, From: EnvHome}
		}
		v.SetDefault(k.key, val{k.get(&defaults), o})
		if fv, ok := flags[k.key]; ok {
			v.Set(k.key, fv)
		}
	}
	for _, layer := range []map[string]val{file, env} {
		if err := v.MergeConfigMap(nested(layer)); err != nil {
			return Settings{}, nil, fmt.Errorf("settings: merge: %w", err)
		}
	}

	s := defaults
	origins := map[string]Origin{}
	for i := range schema {
		k := &schema[i]
		x := v.Get(k.key).(val)
		k.set(&s, x.v)
		origins[k.key] = x.o
	}
	s.DataDir = e.path(s.DataDir)
	s.Codec.KeyFile = e.path(s.Codec.KeyFile)
	s.Stream.PushCertFile = e.path(s.Stream.PushCertFile)
	s.Stream.PushKeyFile = e.path(s.Stream.PushKeyFile)
	s.file = path
	if err := s.Validate(); err != nil {
		var se *Error
		if errors.As(err, &se) && se.p != nil && origins[se.p.base()].source() != "" {
			return Settings{}, nil, se.p.err(origins[se.p.base()].source())
		}
		return Settings{}, nil, err
	}
	return s, origins, nil
}

// readLayer parses, strictly and once, every key a layer sets (lookup says
// its text and origin) and returns the values by key.
func readLayer(lookup func(*keyDef) (string, Origin, bool)) (map[string]val, error) {
	out := map[string]val{}
	for i := range schema {
		k := &schema[i]
		text, o, ok := lookup(k)
		if !ok {
			continue
		}
		x, p := k.convert(rawValue{text: text})
		if p != nil {
			return nil, p.err(o.source())
		}
		out[k.key] = val{x, o}
	}
	return out, nil
}

// nested turns dotted keys into viper's config shape.
func nested(layer map[string]val) map[string]any {
	out := map[string]any{}
	for key, x := range layer {
		m := out
		parts := strings.Split(key, ".")
		for _, p := range parts[:len(parts)-1] {
			if _, ok := m[p]; !ok {
				m[p] = map[string]any{}
			}
			m = m[p].(map[string]any)
		}
		m[parts[len(parts)-1]] = x
	}
	return out
}

// readLayerFile reads the settings file Load uses: path, named by namedBy
// ("" for the default file, which may be missing). A default or
// $DURABLE_AGENT_CONFIG file is not read with opts.NoDefaultFile.
func readLayerFile(opts LoadOptions, path, namedBy, dirSource string) (map[string]val, error) {
	if opts.NoDefaultFile && (namedBy == "" || namedBy == "environment "+EnvConfig) {
		return nil, nil
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
	case err == nil || namedBy == "" && errors.Is(err, os.ErrNotExist):
		return file, nil
	case errors.Is(err, os.ErrNotExist):
		return nil, &Error{Key: "file", Value: path, Source: namedBy,
			msg: fmt.Sprintf("settings: settings file %s (from %s) does not exist", path, namedBy), err: err}
	}
	return nil, err
}

// checkUnknownEnv rejects DURABLE_AGENT_ variables that name no key: a
// typo there would otherwise be ignored in silence. Values are not shown.
func checkUnknownEnv(e environment, other []string) error {
	if e.environ == nil {
		return nil
	}
	known := map[string]bool{EnvHome: true, EnvConfig: true, EnvCodecKey: true, EnvWorkerBin: true}
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
	if s := Suggest(strings.TrimPrefix(name, EnvPrefix), candidates); s != "" {
		msg += " (did you mean " + EnvPrefix + s + "?)"
	}
	return &Error{Key: name, Source: "environment " + name, msg: msg}
}

// locateFile picks the settings file and says what named it ("" for the
// default file, which may be missing) and, for the default file, what
// chose its data dir ("" for the built-in default).
func locateFile(opts LoadOptions, e environment, env, flags map[string]val, defDataDir string) (path, namedBy, dirSource string) {
	if opts.File != "" {
		return e.path(opts.File), "LoadOptions.File", ""
	}
	if opts.Flags != nil {
		if f := opts.Flags.Lookup(ConfigFlag); f != nil && f.Changed && f.Value.String() != "" {
			return e.path(f.Value.String()), "flag --" + ConfigFlag, ""
		}
	}
	if p, ok := e.get(EnvConfig); ok {
		return e.path(p), "environment " + EnvConfig, ""
	}
	// The file cannot move itself: only a flag or the environment decide
	// which data dir holds it.
	dir := defDataDir
	if _, ok := e.get(EnvHome); ok {
		dirSource = "environment " + EnvHome
	}
	for _, layer := range []map[string]val{env, flags} {
		if x, ok := layer["dataDir"]; ok {
			dir, dirSource = x.v.(string), x.o.source()
		}
	}
	return e.path(filepath.Join(dir, FileName)), "", dirSource
}
