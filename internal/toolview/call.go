package toolview

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/durableagent/durableagent/internal/line"
)

// CallLine shows a tool call the way a person recognises it, in at most
// room runes: the tool and its main argument (MainArg, its first line),
// else its arguments as compact JSON, else the tool alone.
func CallLine(name string, args json.RawMessage, room int) string {
	v := OneLine(MainArg(args))
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

// OneLine is s's first line, marked " …" when more lines follow.
func OneLine(s string) string {
	if first := line.First(s); first != s {
		return first + " …"
	}
	return s
}

// Lines splits text into lines ("\r\n" is a line break too), without the
// trailing empty ones.
func Lines(text string) []string {
	text = strings.TrimRight(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
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
