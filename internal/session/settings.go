package session

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/settings"
)

// SettingsKey is the aside key of a session's own settings (Settings):
// the session's first prompt records them, every later prompt runs with
// them, and only an explicit change replaces them.
const SettingsKey = "session-settings"

// CustomSettingsChange is the CustomType of the custom entry that records
// an explicit change of the session's settings in the file (its Data is
// a SettingsChange).
const CustomSettingsChange = "session_settings_change"

// Settings are the settings that decide what the model may do in a
// session (tools enabled, approval policy): they belong to the session,
// not to whoever sends a prompt. The key table marks them
// (settings.SessionKeys); each field's key tag names its key. The model
// and thinking level are the session's through its model_change and
// thinking_level_change entries.
type Settings struct {
	Tools []string `json:"tools" key:"tools.enabled"`
	agent.Approval
	agent.SessionLimits // another terminal's prompt cannot raise them
}

// SettingsChange is an explicit change of one session setting, as the
// user wrote it.
type SettingsChange struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// field is the field of s that holds key; the zero Value for a key that
// is not a session setting.
func (s *Settings) field(key string) reflect.Value {
	v := reflect.ValueOf(s).Elem()
	for _, f := range reflect.VisibleFields(v.Type()) {
		if f.Tag.Get("key") == key && slices.Contains(settings.SessionKeys(), key) {
			return v.FieldByIndex(f.Index)
		}
	}
	return reflect.Value{}
}

// With returns s with key's value taken from from (the settings of a
// prompt built with the new value); an unknown key is an error.
func (s Settings) With(key string, from Settings) (Settings, error) {
	f := s.field(key)
	if !f.IsValid() {
		return s, fmt.Errorf("%q is not a session setting (one of %s)", key, strings.Join(settings.SessionKeys(), ", "))
	}
	f.Set(from.field(key))
	return s, nil
}

// Differences names the keys whose values differ between s and o (an
// empty list equals none).
func (s Settings) Differences(o Settings) []string {
	var keys []string
	for _, k := range settings.SessionKeys() {
		x, y := s.field(k), o.field(k)
		if !(x.Kind() == reflect.Slice && x.Len() == 0 && y.Len() == 0) && !reflect.DeepEqual(x.Interface(), y.Interface()) {
			keys = append(keys, k)
		}
	}
	return keys
}
