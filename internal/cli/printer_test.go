package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

func textDelta(entry, delta string, attempt int) agent.Event {
	return agent.Event{Type: agent.EventMessageUpdate, EntryID: entry,
		AssistantMessageEvent: &agent.AssistantMessageEvent{Type: "text_delta", Delta: delta, Attempt: attempt}}
}

// A streamed answer is printed once, and at its message_end (issue 23:
// every assistant message prints, not only a prompt's last): Follow
// completes its deltas to the message_end text, so the stream is the
// answer; what streamed only in part is completed (the rest of it, or
// the whole text when what streamed was not its start), and an answer
// that did not stream is printed whole.
func TestPrinter_StreamedAnswerPrintedOnce(t *testing.T) {
	const answer = "Fixed the typo; sh test.sh passes now."
	for _, tc := range []struct {
		name     string
		deltas   []string
		streamed bool
		want     string
	}{
		{"the deltas add up to the answer", []string{"Fixed the typo; ", "sh test.sh", " passes now."}, true, answer + "\n"},
		{"only the start streamed", []string{"Fixed the typo; "}, true, answer + "\n"},
		{"only the tail streamed (a late attach)", []string{"passes now."}, true, "passes now.\n" + answer + "\n"},
		{"no stream", nil, true, answer + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			p := newPrinter(&out, false, "s1")
			for _, d := range tc.deltas {
				p.print(textDelta("e2", d, 0))
			}
			final := agent.TextMessage(agent.RoleAssistant, answer)
			final.StopReason = agent.StopReasonStop
			p.print(agent.Event{Type: agent.EventMessageEnd, EntryID: "e2", Message: &final})
			p.print(agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusCompleted})
			p.stopCountdown()
			if p.lastStreamed != tc.streamed {
				t.Fatalf("lastStreamed %t, want %t", p.lastStreamed, tc.streamed)
			}
			if !p.lastStreamed { // as FollowPrompt does
				out.WriteString(p.lastText + "\n")
			}
			if got := out.String(); got != tc.want {
				t.Fatalf("printed %q, want %q", got, tc.want)
			}
		})
	}
}

// On a terminal each delta is written as it arrives; piped, a line at a
// time (a partial line waits for its newline).
func TestPrinter_StreamsOnATerminalLinesWhenPiped(t *testing.T) {
	deltas := []string{"Reading ", "the file", ".\nIt has ", "two lines."}
	for _, tc := range []struct {
		name     string
		terminal bool
		after    []string // output after each delta
	}{
		{"terminal", true, []string{"Reading ", "Reading the file", "Reading the file.\nIt has ", "Reading the file.\nIt has two lines."}},
		{"piped", false, []string{"", "", "Reading the file.\n", "Reading the file.\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			p := newPrinter(&out, false, "s1")
			p.noCountdown = !tc.terminal // what newPrinter derives from isTerminal
			for i, d := range deltas {
				p.print(textDelta("e2", d, 0))
				if got := out.String(); got != tc.after[i] {
					t.Fatalf("after delta %d: %q, want %q", i, got, tc.after[i])
				}
			}
			final := agent.TextMessage(agent.RoleAssistant, strings.Join(deltas, ""))
			p.print(agent.Event{Type: agent.EventMessageEnd, EntryID: "e2", Message: &final})
			if got := out.String(); got != strings.Join(deltas, "")+"\n" {
				t.Fatalf("at message_end: %q", got)
			}
		})
	}
}

// --json prints every event as a line, live ones included, with the
// message_update fields clients use (attempt always, output tokens).
func TestPrinter_JSONIncludesLiveEvents(t *testing.T) {
	var out bytes.Buffer
	p := newPrinter(&out, true, "s1")
	start := agent.Event{Type: agent.EventMessageStart, Seq: 3, EntryID: "e2"}
	upd := textDelta("e2", "Hel", 0)
	upd.Seq = 3
	upd.AssistantMessageEvent.OutputTokens = 1
	tool := agent.Event{Type: agent.EventToolExecutionUpdate, Seq: 4, ToolCallID: "c1", ToolName: "bash",
		PartialResult: &agent.ToolResult{Content: []agent.ContentBlock{{Type: "text", Text: "out"}}}}
	for _, e := range []agent.Event{start, upd, tool} {
		p.print(e)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines: %q", len(lines), out.String())
	}
	var got struct {
		Type                  string `json:"type"`
		Seq                   int64  `json:"seq"`
		EntryID               string `json:"entryId"`
		AssistantMessageEvent map[string]any
	}
	if err := json.Unmarshal([]byte(lines[1]), &got); err != nil {
		t.Fatal(err)
	}
	a := got.AssistantMessageEvent
	if got.Type != "message_update" || got.Seq != 3 || got.EntryID != "e2" || a["type"] != "text_delta" || a["delta"] != "Hel" ||
		a["attempt"] != 0.0 || a["outputTokens"] != 1.0 || a["contentIndex"] != 0.0 {
		t.Fatalf("message_update line %s", lines[1])
	}
	if !strings.Contains(lines[2], `"type":"tool_execution_update"`) || !strings.Contains(lines[2], `"partialResult":{"content":[{"type":"text","text":"out"}]}`) {
		t.Fatalf("tool_execution_update line %s", lines[2])
	}
}
