package settings

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/durableagent/durableagent/internal/line"
)

// rawValue is a value as written, before parsing: scalar text, or the
// items of a YAML sequence; where is the file and line that holds it.
type rawValue struct {
	text  string
	items []string
	seq   bool
	where string
}

// problem is a rejected value, before its source is known.
type problem struct {
	key    string // may carry an index: scripted.faults[1]
	value  string
	reason string
	quiet  bool // reason already shows the value
}

// Error is a rejected setting. Its message is one line naming the key, the
// value and where it came from.
type Error struct {
	// Key is the dotted key, the unknown key or the unknown variable, or
	// "file" when the settings file cannot be read or parsed.
	Key string
	msg string
	err error
	p   *problem // lets Load add the source to a Validate error
}

// Error returns the one-line message.
func (e *Error) Error() string { return e.msg }

// Unwrap returns the underlying error (a YAML or file error), if any.
func (e *Error) Unwrap() error { return e.err }

func (p *problem) err(source string) *Error {
	msg := "settings: " + p.key + ": " + p.reason
	if !p.quiet {
		msg += fmt.Sprintf(", got %q", p.value)
	}
	if source != "" {
		msg += " (from " + source + ")"
	}
	return &Error{Key: p.key, msg: line.Fold(msg), p: p}
}

// base is the key without a list index.
func (p *problem) base() string {
	k, _, _ := strings.Cut(p.key, "[")
	return k
}

// commaReason says how list items are separated.
const commaReason = `list items are separated by ";", not ","`

// convert parses a raw value strictly into the key's Go type (bool, int64,
// string or []string) and applies the key's own limits. Every layer's
// value goes through it once, when the layer is read.
func (k *keyDef) convert(r rawValue) (any, *problem) {
	kd := k.kind()
	if kd == kindList {
		items := r.items
		if !r.seq && strings.TrimSpace(r.text) != "" {
			// Environment and flags: a ";"-separated list. A "," is
			// refused where no item may hold one, and named when an item
			// holding one is refused: "bash,edit" is most likely two.
			for i, it := range strings.Split(r.text, ";") {
				it = strings.TrimSpace(it)
				if strings.Contains(it, ",") && !k.commas {
					return nil, &problem{key: fmt.Sprintf("%s[%d]", k.key, i), value: it, reason: commaReason}
				}
				items = append(items, it)
			}
		}
		if len(items) == 0 {
			items = nil
		}
		p := k.check(items)
		if p != nil && !r.seq && strings.Contains(p.key, "[") && strings.Contains(p.value, ",") {
			p.reason += "; " + commaReason
		}
		return items, p
	}
	if r.seq {
		return nil, &problem{key: k.key, value: "[" + strings.Join(r.items, ", ") + "]",
			reason: "must be " + k.kindPhrase() + ", not a list"}
	}
	var v any = r.text
	switch kd {
	case kindBool:
		t := strings.ToLower(strings.TrimSpace(r.text))
		if t != "true" && t != "false" {
			return nil, &problem{key: k.key, value: r.text, reason: "must be " + k.kindPhrase()}
		}
		v = t == "true"
	case kindInt:
		n, err := strconv.ParseInt(strings.TrimSpace(r.text), 10, 64)
		if err != nil {
			return nil, &problem{key: k.key, value: r.text, reason: "must be " + k.kindPhrase()}
		}
		v = n
	}
	return v, k.check(v)
}

func (k *keyDef) kindPhrase() string {
	switch k.kind() {
	case kindBool:
		return "true or false"
	case kindInt:
		return fmt.Sprintf("a whole number >= %d", k.min)
	}
	return "a string"
}

// check applies the key's limits to a parsed value (see convert).
func (k *keyDef) check(v any) *problem {
	switch x := v.(type) {
	case int64:
		text := strconv.FormatInt(x, 10)
		if x < k.min {
			return &problem{key: k.key, value: text, reason: "must be " + k.kindPhrase()}
		}
		if k.max > 0 && x > k.max {
			limit := strconv.FormatInt(k.max, 10)
			if k.limit != "" {
				limit += " (" + k.limit + ")"
			}
			return &problem{key: k.key, value: text, reason: "must be at most " + limit}
		}
	case string:
		if k.nonEmpty && strings.TrimSpace(x) == "" {
			return &problem{key: k.key, value: x, reason: "must not be empty"}
		}
		if k.oneOf != nil && !slices.Contains(k.oneOf, x) {
			return &problem{key: k.key, value: x, reason: "must be one of " + strings.Join(k.oneOf, ", ")}
		}
		if k.strCheck != nil {
			if reason := k.strCheck(x); reason != "" {
				return &problem{key: k.key, value: x, reason: reason, quiet: k.quiet}
			}
		}
	case []string:
		if k.maxItems > 0 && len(x) > k.maxItems {
			return &problem{key: k.key, reason: fmt.Sprintf("must hold at most %d items, has %d", k.maxItems, len(x)), quiet: true}
		}
		seen := map[any]int{}
		for i, it := range x {
			if k.item == nil {
				break
			}
			at := fmt.Sprintf("%s[%d]", k.key, i)
			id, reason := k.item(it)
			if reason != "" {
				return &problem{key: at, value: it, reason: reason, quiet: k.quiet}
			}
			if j, dup := seen[id]; dup && id != nil {
				reason = cmp.Or(k.twice, fmt.Sprintf("repeats %s[%d]", k.key, j))
				return &problem{key: at, value: it, reason: reason}
			}
			seen[id] = i
		}
	}
	return nil
}

// get reads the key's field as a parsed value (the types of convert).
func (k *keyDef) get(s *Settings) any {
	v := reflect.ValueOf(k.field(s)).Elem()
	if v.Kind() == reflect.Int || v.Kind() == reflect.Int64 {
		return v.Int()
	}
	return v.Interface()
}

// set stores a parsed value (from convert) in the key's field.
func (k *keyDef) set(s *Settings, x any) {
	v := reflect.ValueOf(k.field(s)).Elem()
	switch x := x.(type) {
	case int64:
		v.SetInt(x)
	case []string:
		if len(x) == 0 {
			x = nil
		}
		v.Set(reflect.ValueOf(slices.Clone(x)))
	default:
		v.Set(reflect.ValueOf(x))
	}
}

// text renders the key's field in s as the text convert reads back (lists
// ";"-separated), as a flag or environment variable would give it.
func (k *keyDef) text(s *Settings) string {
	switch x := k.get(s).(type) {
	case []string:
		return strings.Join(x, ";")
	default:
		return fmt.Sprint(x)
	}
}

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
