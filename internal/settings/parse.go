package settings

import (
	"fmt"
	"github.com/durableagent/durableagent/internal/line"
	"slices"
	"strconv"
	"strings"
)

// rawValue is a value as written, before parsing: scalar text, or the
// items of a YAML sequence.
type rawValue struct {
	text  string
	items []string
	seq   bool
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
	// Value is the rejected text ("" when there is none to show).
	Value string
	// Source is where the value came from: "file:line", an environment
	// variable or a flag; "" for a merged value checked by Validate.
	Source string
	msg    string
	err    error
	p      *problem // lets Load add the source to a Validate error
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
	return &Error{Key: p.key, Value: p.value, Source: source, msg: line.Fold(msg), p: p}
}

// base is the key without a list index.
func (p *problem) base() string {
	k, _, _ := strings.Cut(p.key, "[")
	return k
}

// convert parses a raw value strictly into the key's Go type (bool, int64,
// string or []string) and applies the key's own limits.
func (k *keyDef) convert(r rawValue) (any, *problem) {
	if k.kind == kindList {
		items := r.items
		if !r.seq {
			// Environment and flags: a ";"-separated list.
			items = nil
			if strings.TrimSpace(r.text) != "" {
				for _, it := range strings.Split(r.text, ";") {
					items = append(items, strings.TrimSpace(it))
				}
			}
		}
		if len(items) == 0 {
			items = nil
		}
		return items, k.check(items)
	}
	if r.seq {
		return nil, &problem{key: k.key, value: "[" + strings.Join(r.items, ", ") + "]",
			reason: "must be " + k.kindPhrase() + ", not a list"}
	}
	var v any
	switch k.kind {
	case kindBool:
		switch strings.ToLower(strings.TrimSpace(r.text)) {
		case "true":
			v = true
		case "false":
			v = false
		default:
			return nil, &problem{key: k.key, value: r.text, reason: "must be " + k.kindPhrase()}
		}
	case kindInt:
		n, err := strconv.ParseInt(strings.TrimSpace(r.text), 10, 64)
		if err != nil {
			return nil, &problem{key: k.key, value: r.text, reason: "must be " + k.kindPhrase()}
		}
		v = n
	default:
		v = r.text
	}
	return v, k.check(v)
}

func (k *keyDef) kindPhrase() string {
	switch k.kind {
	case kindBool:
		return "true or false"
	case kindInt:
		return fmt.Sprintf("a whole number >= %d", k.min)
	case kindList:
		return "a list of strings"
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
				return &problem{key: k.key, value: x, reason: reason}
			}
		}
	case []string:
		if k.listCheck != nil {
			return k.listCheck(k.key, x)
		}
	}
	return nil
}

// get reads the key's field as a parsed value (the types of convert).
func (k *keyDef) get(s *Settings) any {
	switch p := k.field(s).(type) {
	case *bool:
		return *p
	case *int:
		return int64(*p)
	case *int64:
		return *p
	case *string:
		return *p
	case *[]string:
		return *p
	}
	panic("settings: unsupported field type for " + k.key)
}

// set stores a parsed value (from convert) in the key's field.
func (k *keyDef) set(s *Settings, v any) {
	switch p := k.field(s).(type) {
	case *bool:
		*p = v.(bool)
	case *int:
		*p = int(v.(int64))
	case *int64:
		*p = v.(int64)
	case *string:
		*p = v.(string)
	case *[]string:
		*p = append([]string(nil), v.([]string)...)
		if len(*p) == 0 {
			*p = nil
		}
	default:
		panic("settings: unsupported field type for " + k.key)
	}
}

// text renders a field pointer or parsed value as the raw text that
// convert reads back (lists ";"-separated).
func (k *keyDef) text(v any) string {
	switch x := v.(type) {
	case *bool:
		return strconv.FormatBool(*x)
	case *int:
		return strconv.Itoa(*x)
	case *int64:
		return strconv.FormatInt(*x, 10)
	case *string:
		return *x
	case *[]string:
		return strings.Join(*x, ";")
	}
	return fmt.Sprint(v)
}

// rawFrom turns what viper returns (the raw values this package stored in
// it) back into a rawValue.
func rawFrom(v any) rawValue {
	switch x := v.(type) {
	case string:
		return rawValue{text: x}
	case []string:
		return rawValue{items: x, seq: true}
	case []any:
		items := make([]string, len(x))
		for i, it := range x {
			items[i] = fmt.Sprint(it)
		}
		return rawValue{items: items, seq: true}
	case nil:
		return rawValue{}
	}
	return rawValue{text: fmt.Sprint(v)}
}
