package settings

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	// NoDefaultFile reads no settings file unless File or --config names
	// one: neither <dataDir>/settings.yaml nor $DURABLE_AGENT_CONFIG. The
	// demo runs with its own settings this way, whatever a user persisted
	// (set-auto-retry off writes retry.enabled: false there).
	NoDefaultFile bool
}

// temporalEnv are the Temporal CLI's standard variables; the
// DURABLE_AGENT_ variable of the same key wins.
var temporalEnv = map[string]string{
	"temporal.address":   "TEMPORAL_ADDRESS",
	"temporal.namespace": "TEMPORAL_NAMESPACE",
}

// Load reads the settings: defaults, then the settings file, then the
// environment, then flags, each later source winning key by key. The
// winning value of each key is parsed strictly, and the result is checked
// with Validate; the first problem is returned as an *Error.
func Load(opts LoadOptions) (Settings, error) {
	s, _, err := loadWithOrigins(opts)
	return s, err
}

// Source says where key's value among values (Explain's) comes from:
// "flag --name", "environment NAME", "<file>:<line>", or "" when the
// built-in default applies. Programs use it to tell a value chosen on
// purpose from a default, e.g. the worker's opt-in to the scripted model
// outside --dev.
func Source(values []Value, key string) (string, error) {
	if i := slices.IndexFunc(values, func(v Value) bool { return v.Key == key }); i >= 0 {
		return values[i].source(), nil
	}
	return "", fmt.Errorf("settings: unknown key %q", key)
}

// loadWithOrigins is Load that also says where each key's value came
// from. viper layers the sources: defaults (SetDefault), the file
// (ReadInConfig, decoded by fileCodec), the environment (AutomaticEnv
// with the DURABLE_AGENT_ prefix; BindEnv for TEMPORAL_*) and flags
// (BindFlagValue). Each key's winner is then parsed once, strictly, by
// the key table, and its origin is the layer that set it.
func loadWithOrigins(opts LoadOptions) (Settings, map[string]Origin, error) {
	if err := checkUnknownEnv(); err != nil {
		return Settings{}, nil, err
	}
	codec := &fileCodec{}
	v := viper.NewWithOptions(viper.WithDecoderRegistry(codec))
	v.SetEnvPrefix(strings.TrimSuffix(EnvPrefix, "_"))
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	v.SetConfigType("yaml")
	defaults := Defaults()
	for i := range schema {
		k := &schema[i]
		v.SetDefault(k.key, k.get(&defaults))
		if alt := temporalEnv[k.key]; alt != "" {
			_ = v.BindEnv(k.key, alt) // errors only without a key
		}
		if f := lookupFlag(opts.Flags, k.flag()); f != nil {
			_ = v.BindFlagValue(k.key, textValue{f}) // errors only for a nil flag
		}
	}
	path, err := readFile(v, codec, opts)
	if err != nil {
		return Settings{}, nil, err
	}

	s := defaults
	origins := map[string]Origin{}
	for i := range schema {
		k := &schema[i]
		o := origin(v, opts.Flags, k)
		origins[k.key] = o
		if o.Kind == OriginDefault {
			continue
		}
		raw, ok := v.Get(k.key).(rawValue) // the file's; flags and variables are text
		if !ok {
			raw = rawValue{text: v.GetString(k.key)}
		}
		x, p := k.convert(raw)
		if p != nil {
			return Settings{}, nil, p.err(o.source())
		}
		k.set(&s, x)
	}
	s.DataDir = expandPath(s.DataDir)
	s.Codec.KeyFile = expandPath(s.Codec.KeyFile)
	s.Stream.PushCertFile = expandPath(s.Stream.PushCertFile)
	s.Stream.PushKeyFile = expandPath(s.Stream.PushKeyFile)
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

// origin is the layer that sets k in v, in viper's order: a flag the user
// set, then the environment, then the file, then the default.
func origin(v *viper.Viper, flags *pflag.FlagSet, k *keyDef) Origin {
	if f := lookupFlag(flags, k.flag()); f != nil && f.Changed {
		return Origin{Kind: OriginFlag, From: "--" + f.Name}
	}
	for _, name := range []string{k.env(), temporalEnv[k.key]} {
		if _, ok := getenv(name); ok {
			return Origin{Kind: OriginEnv, From: name}
		}
	}
	if v.InConfig(k.key) {
		if raw, ok := v.Get(k.key).(rawValue); ok {
			return Origin{Kind: OriginFile, From: raw.where}
		}
	}
	if _, ok := getenv(EnvHome); ok && k.key == "dataDir" {
		return Origin{Kind: OriginEnv, From: EnvHome}
	}
	return Origin{Kind: OriginDefault}
}

func lookupFlag(fs *pflag.FlagSet, name string) *pflag.Flag {
	if fs == nil {
		return nil
	}
	return fs.Lookup(name)
}

// textValue hands viper a flag's text. It says every flag is a string:
// viper converts "int" and "bool" flags with spf13/cast, which turns
// "abc" into 0, and the key table must see the text to reject it.
type textValue struct{ f *pflag.Flag }

func (t textValue) HasChanged() bool    { return t.f.Changed }
func (t textValue) Name() string        { return t.f.Name }
func (t textValue) ValueString() string { return t.f.Value.String() }
func (t textValue) ValueType() string   { return "string" }

// readFile has v read the settings file Load uses (see LoadOptions.File)
// and returns its path, read or not. The default file may be missing; a
// default or $DURABLE_AGENT_CONFIG file is not read with opts.NoDefaultFile.
func readFile(v *viper.Viper, codec *fileCodec, opts LoadOptions) (string, error) {
	path, namedBy := locateFile(v, opts)
	if opts.NoDefaultFile && (namedBy == "" || namedBy == "environment "+EnvConfig) {
		return path, nil
	}
	if namedBy == "" {
		// Say "dataDir is a file" rather than "cannot read <file>/settings.yaml".
		dir := filepath.Dir(path)
		if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
			return "", (&problem{key: "dataDir", value: dir, reason: "must be a directory, not a file"}).err(origin(v, opts.Flags, lookupKey("dataDir")).source())
		}
	}
	fi, err := os.Stat(path)
	switch {
	case namedBy == "" && errors.Is(err, os.ErrNotExist):
		return path, nil
	case errors.Is(err, os.ErrNotExist):
		return "", &Error{Key: "file",
			msg: fmt.Sprintf("settings: settings file %s (from %s) does not exist", path, namedBy), err: err}
	case err != nil:
		return "", readError(path, err)
	}
	if err := checkFile(path, fi); err != nil {
		return "", err
	}
	codec.path = path
	v.SetConfigFile(path)
	if err := v.ReadInConfig(); err != nil {
		var se *Error
		if errors.As(err, &se) {
			return "", se
		}
		return "", readError(path, err)
	}
	return path, nil
}

// locateFile picks the settings file and says what named it ("" for the
// default file, <dataDir>/settings.yaml).
func locateFile(v *viper.Viper, opts LoadOptions) (path, namedBy string) {
	if opts.File != "" {
		return expandPath(opts.File), "LoadOptions.File"
	}
	if f := lookupFlag(opts.Flags, ConfigFlag); f != nil && f.Changed && f.Value.String() != "" {
		return expandPath(f.Value.String()), "flag --" + ConfigFlag
	}
	if p, ok := getenv(EnvConfig); ok {
		return expandPath(p), "environment " + EnvConfig
	}
	// The file cannot move itself: v has not read it yet, so only a flag
	// or the environment decide which data dir holds it.
	return filepath.Join(expandPath(v.GetString("dataDir")), FileName), ""
}

// checkUnknownEnv rejects DURABLE_AGENT_ variables that name no key: a
// typo there would otherwise be ignored in silence. Values are not shown.
func checkUnknownEnv() error {
	known := map[string]bool{EnvHome: true, EnvConfig: true, EnvCodecKey: true, EnvWorkerBin: true}
	var candidates []string
	for i := range schema {
		known[schema[i].env()] = true
		candidates = append(candidates, strings.TrimPrefix(schema[i].env(), EnvPrefix))
	}
	var unknown []string
	for _, kv := range os.Environ() {
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
	return &Error{Key: name, msg: msg}
}
