package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

// The live deltas of an answer are snapshots: when the last words arrive
// only with message_end, the printer prints them too (the demo's answer
// lost "passes now." this way).
func TestPrinter_StreamedAnswerCompletedByMessageEnd(t *testing.T) {
	for _, tc := range []struct {
		name   string
		deltas []string
	}{
		{"stream cut short", []string{"Fixed the typo; ", "sh test.sh"}},
		{"stream complete", []string{"Fixed the typo; ", "sh test.sh passes now."}},
		{"no stream", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			p := newPrinter(&out, false, "s1")
			for _, d := range tc.deltas {
				p.print(agent.Event{Type: agent.EventMessageUpdate, EntryID: "e2",
					AssistantMessageEvent: &agent.AssistantMessageEvent{Type: "text_delta", Delta: d}})
			}
			final := agent.TextMessage(agent.RoleAssistant, "Fixed the typo; sh test.sh passes now.")
			final.StopReason = agent.StopReasonStop
			p.print(agent.Event{Type: agent.EventMessageEnd, EntryID: "e2", Message: &final})
			p.print(agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusCompleted})
			p.stop()
			if !p.lastStreamed { // as FollowPrompt does
				out.WriteString(p.lastText + "\n")
			}
			if got := out.String(); strings.Count(got, "Fixed the typo; sh test.sh passes now.\n") != 1 {
				t.Fatalf("printed %q, want the whole answer once", got)
			}
		})
	}
}
