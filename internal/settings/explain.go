package settings

import "fmt"

// Origins: where a key's effective value came from, highest precedence
// first.
const (
	OriginFlag    = "flag"
	OriginEnv     = "env"
	OriginFile    = "file"
	OriginDefault = "default"
)

// Origin says where a key's effective value came from.
type Origin struct {
	// Kind is OriginFlag, OriginEnv, OriginFile or OriginDefault.
	Kind string `json:"origin"`
	// From names the flag ("--retry.enabled"), the environment variable
	// ("DURABLE_AGENT_RETRY_ENABLED"; "DURABLE_AGENT_HOME" for a dataDir
	// derived from it) or the file and line ("/x/settings.yaml:3"); empty
	// for a built-in default.
	From string `json:"from,omitempty"`
}

// String is "default", "flag --x", "env NAME" or "file PATH:LINE".
func (o Origin) String() string {
	if o.From == "" {
		return o.Kind
	}
	return o.Kind + " " + o.From
}

// Value is one key's effective value and its origin.
type Value struct {
	Key string `json:"key"`
	// Value is the value as a flag would give it (lists ";"-separated),
	// with the password of a database URL masked.
	Value string `json:"value"`
	Origin
}

// Explain loads the settings as Load does and lists, key by key in schema
// order, the effective value and where it came from (`starter settings`),
// so a value persisted long ago (set-auto-retry off writes
// retry.enabled: false) can be seen and traced to its file and line.
func Explain(opts LoadOptions) (Settings, []Value, error) {
	s, origins, err := loadWithOrigins(opts)
	if err != nil {
		return Settings{}, nil, err
	}
	out := make([]Value, 0, len(schema))
	for i := range schema {
		k := &schema[i]
		text := k.text(k.field(&s))
		if k.key == "session.postgresUrl" {
			text = RedactURL(text)
		}
		out = append(out, Value{Key: k.key, Value: text, Origin: origins[k.key]})
	}
	return s, out, nil
}

// winnerOrigin is winnerSource as an Origin: which layer gave key its
// value, mirroring viper's precedence.
func winnerOrigin(key string, file *fileLayer, envVals, flagVals map[string]layerValue, e environment) Origin {
	if lv, ok := flagVals[key]; ok {
		return Origin{Kind: OriginFlag, From: "--" + lv.flag.Name}
	}
	if lv, ok := envVals[key]; ok {
		return Origin{Kind: OriginEnv, From: lv.name}
	}
	if fv, ok := file.values[key]; ok {
		return Origin{Kind: OriginFile, From: fmt.Sprintf("%s:%d", file.path, fv.line)}
	}
	if _, ok := e.get(EnvHome); ok && key == "dataDir" {
		return Origin{Kind: OriginEnv, From: EnvHome}
	}
	return Origin{Kind: OriginDefault}
}
