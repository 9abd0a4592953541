package toolview

import (
	"bytes"
	"encoding/json"

	"github.com/durableagent/durableagent/internal/line"
)

// CallLine shows a tool call the way a person recognises it, in at most
// room runes: the tool and its main argument (MainArg, its first line),
// else its arguments as compact JSON, else the tool alone.
func CallLine(name string, args json.RawMessage, room int) string {
	v := MainArg(args)
	if first := line.First(v); first != v {
		v = first + " …"
	}
	if v == "" {
		var m map[string]any
		var b bytes.Buffer
		if json.Unmarshal(args, &m) != nil || len(m) == 0 || json.Compact(&b, args) != nil {
			return name
		}
		v = b.String()
	}
	return name + " " + line.Cut(v, room-len(name)-1)
}

// MainArg is a call's command, path or pattern ("" without one).
func MainArg(args json.RawMessage) string {
	var m map[string]any
	_ = json.Unmarshal(args, &m)
	for _, k := range []string{"command", "path", "pattern"} {
		if v, ok := m[k].(string); ok && v != "" {
			return v
		}
	}
	return ""
}
