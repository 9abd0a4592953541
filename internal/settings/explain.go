package settings

import (
	"fmt"
	"strings"
)

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
func (o Origin) String() string { return strings.TrimSpace(o.Kind + " " + o.From) }

// source is the origin as error messages and Source name it: "flag --x",
// "environment NAME", "PATH:LINE", or "" for a default (a dataDir derived
// from DURABLE_AGENT_HOME included).
func (o Origin) source() string {
	switch {
	case o.Kind == OriginFlag:
		return "flag " + o.From
	case o.Kind == OriginEnv && o.From != EnvHome:
		return "environment " + o.From
	case o.Kind == OriginFile:
		return o.From
	}
	return ""
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
		text := k.text(&s)
		if k.key == "session.postgresUrl" {
			text = RedactURL(text)
		}
		out = append(out, Value{Key: k.key, Value: text, Origin: origins[k.key]})
	}
	return s, out, nil
}

// Unread lists the keys of values (Explain's) that were set in a source
// (a flag, an environment variable, the settings file) and that program
// does not read (reads reports false, e.g. WorkerReads for the worker):
// one line each, naming the key, where it was set, the program and where
// the key takes effect, so a setting given to the wrong program is not
// ignored in silence. Keys at their default are not listed. program is
// the subject of "not read by", e.g. "the worker".
func Unread(values []Value, program string, reads func(KeyInfo) bool) []string {
	var out []string
	for i, k := range Keys() { // values are in schema order too
		o := values[i].Origin
		if reads(k) || o.Kind == OriginDefault || o.Kind == "" {
			continue
		}
		out = append(out, fmt.Sprintf("%s (%s) is not read by %s: %s", k.Key, o, program, k.TakesEffect()))
	}
	return out
}
