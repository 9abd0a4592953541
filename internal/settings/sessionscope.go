package settings

import "fmt"

// SetText sets key in s to text, parsed and checked as a flag's value
// (lists ";"-separated): `starter session set KEY VALUE` builds the new
// value of a session's own setting this way. The problem is one line
// naming the key and the value.
func SetText(s *Settings, key, text string) error {
	k := lookupKey(key)
	if k == nil {
		return fmt.Errorf("settings: unknown key %q", key)
	}
	v, p := k.convert(rawValue{text: text})
	if p != nil {
		return p.err("")
	}
	k.set(s, v)
	return nil
}

// SessionKeys are the keys a session owns (session.Settings), in table
// order: its first prompt records them, `starter session set` changes
// them.
func SessionKeys() []string {
	var keys []string
	for i := range schema {
		if schema[i].session {
			keys = append(keys, schema[i].key)
		}
	}
	return keys
}
