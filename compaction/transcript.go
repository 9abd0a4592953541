package compaction

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// MaxToolResultRunes is how much of each tool result a transcript
// shows. Tool output (file dumps,
// logs) is most of a coding context and least of what a summary needs;
// cutting it keeps the summary request itself well inside the window.
const MaxToolResultRunes = 2000

// Transcript renders items as the plain-text conversation a summariser
// reads: one labelled paragraph per message part, e.g. "[User]: …",
// "[Assistant tool call]: read {"path":"a.go"}", "[Tool result read]: …".
// Tool results longer than MaxToolResultRunes are cut, with a note saying
// how much was left out. Rendering it as text, not as chat messages, stops
// the summariser from treating the conversation as its own.
func Transcript(items []Item) string {
	var parts []string
	add := func(label, text string) {
		if strings.TrimSpace(text) != "" {
			parts = append(parts, "["+label+"]: "+text)
		}
	}
	for _, it := range items {
		switch it.Role {
		case RoleUser:
			add("User", it.Text)
		case RoleAssistant:
			add("Assistant thinking", it.Thinking)
			add("Assistant", it.Text)
			for _, tc := range it.ToolCalls {
				parts = append(parts, "[Assistant tool call]: "+tc.Name+" "+compactJSON(tc.Arguments))
			}
		case RoleToolResult:
			label := "Tool result"
			if it.IsError {
				label = "Tool error"
			}
			if it.ToolName != "" {
				label += " " + it.ToolName
			}
			text := truncateRunes(it.Text, MaxToolResultRunes)
			if strings.TrimSpace(text) == "" {
				text = "(no output)"
			}
			add(label, text)
		case RoleSummary:
			add("Earlier summary", it.Text)
		default:
			add(it.Role, it.Text)
		}
	}
	return strings.Join(parts, "\n\n")
}

// compactJSON prints arguments on one line; text that is not JSON is shown
// as it came.
func compactJSON(raw json.RawMessage) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "{}"
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

// truncateRunes keeps the first limit runes of s.
func truncateRunes(s string, limit int) string {
	r := []rune(s)
	if len(r) <= limit {
		return s
	}
	return string(r[:limit]) + fmt.Sprintf("\n[… %d more characters left out]", len(r)-limit)
}
