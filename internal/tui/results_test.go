package tui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/durableagent/durableagent/agent"
)

// endWithBody emits a tool call whose result is longer than the event's
// 160-character preview: the whole result is stored first (emit writes a
// message_end's message to the session file, as the worker writes the
// entry before the event), then the call runs and ends with the preview.
func (d *liveDriver) endWithBody(callID, tool, args, body string, isError bool) {
	d.t.Helper()
	whole := agent.Message{Role: agent.RoleToolResult, ToolCallID: callID, ToolName: tool, IsError: isError,
		Content: []agent.ContentBlock{{Type: "text", Text: body}}}
	d.emit(answer("r-"+callID, whole),
		agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: callID, ToolName: tool, Args: json.RawMessage(args)})
	d.emit(agent.Event{Type: agent.EventToolExecutionEnd, ToolCallID: callID, ToolName: tool, EntryID: "r-" + callID, IsError: isError,
		ToolResult: &agent.ToolResult{Content: []agent.ContentBlock{{Type: "text", Text: body[:160]}},
			Details: map[string]any{"truncated": true, "bytes": len(body), "entryId": "r-" + callID}}})
}

// Issue 23: a tool result shows as terminal agents show it, read whole
// from the session when the event's preview is cut: an edit's diff with
// its + lines (coloured), a failing command's last lines and exit code;
// ctrl+o expands every result whole and back.
func TestModel_ToolResultsShownWholeDiffColouredExpandable(t *testing.T) {
	d := newLiveDriver(t)
	diff := "Successfully replaced text in greet.go.\n\n" +
		"  9 func Greet(name string) string {\n 10     // The greeting a caller prints for its user; kept short on purpose.\n" +
		"-11     return \"Helo, \" + name + \"!\"\n+11     return \"Hello, \" + name + \"!\"\n 12 }\n"
	d.endWithBody("call_1", "edit", `{"path":"greet.go"}`, diff, false)
	d.untilScreen(`+11     return "Hello, "`)
	d.shows("edit", []string{"✓ edit greet.go", "Successfully replaced text in greet.go.", `-11     return "Helo, "`}, []string{"preview of"})

	var out strings.Builder
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&out, "=== RUN   TestGreeting/case_%02d\n", i)
	}
	out.WriteString("--- FAIL: TestGreeting (0.00s)\nFAIL    example.com/greet    0.004s\n\nCommand exited with code 1")
	d.endWithBody("call_2", "bash", `{"command":"go test ./..."}`, out.String(), true)
	d.untilScreen("Command exited with code 1")
	d.shows("failing command", []string{"✗ bash go test ./...", "… 22 earlier lines (ctrl+o to expand)", "case_30", "FAIL    example.com/greet"},
		[]string{"case_22\n", "case_01"})

	d.send(tea.KeyMsg{Type: tea.KeyCtrlO})
	d.shows("expanded", []string{"case_30", "Command exited with code 1"}, []string{"earlier lines"})
	d.send(tea.KeyMsg{Type: tea.KeyPgUp})
	d.send(tea.KeyMsg{Type: tea.KeyPgUp})
	d.shows("expanded, scrolled up", []string{"case_01", "newer lines (pgdown)"}, []string{"Command exited with code 1"})
	d.send(tea.KeyMsg{Type: tea.KeyPgDown})
	d.send(tea.KeyMsg{Type: tea.KeyPgDown})
	d.shows("back at the end", []string{"Command exited with code 1"}, []string{"newer lines"})
	d.send(tea.KeyMsg{Type: tea.KeyCtrlO})
	d.shows("collapsed again", []string{"… 22 earlier lines"}, []string{"case_01"})

	// The diff's lines are coloured: added green, removed red.
	prev := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.ANSI)
	defer lipgloss.SetColorProfile(prev)
	screen := d.m.View()
	if !strings.Contains(screen, addedStyle.Render(`  +11     return "Hello, " + name + "!"`)) ||
		!strings.Contains(screen, removedStyle.Render(`  -11     return "Helo, " + name + "!"`)) {
		t.Fatalf("diff lines are not coloured:\n%q", screen)
	}
}
