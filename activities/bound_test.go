package activities

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/durableagent/durableagent/agent"
)

// History stays bounded per model call: a huge answer or error body is
// cut in the activity's result (the session entry keeps it whole).
func TestResultOf_BoundsWhatEntersHistory(t *testing.T) {
	long := strings.Repeat("é", MaxAnswerInHistory) // 2 bytes each
	m := agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonError,
		Content: []agent.ContentBlock{{Type: "text", Text: long}}, ErrorMessage: strings.Repeat("<html>", 5000)}
	r := resultOf("e7", m, "")
	if len(r.Text) > MaxAnswerInHistory+100 || !utf8.ValidString(r.Text) || !strings.HasSuffix(r.Text, "session entry e7]") {
		t.Fatalf("text of %d bytes, valid %t, ends %q", len(r.Text), utf8.ValidString(r.Text), r.Text[len(r.Text)-40:])
	}
	if len(r.ErrorMessage) > MaxErrorInHistory+100 || !strings.Contains(r.ErrorMessage, "more bytes") {
		t.Fatalf("error message of %d bytes", len(r.ErrorMessage))
	}
	short := resultOf("e8", agent.TextMessage(agent.RoleAssistant, "fine"), "")
	if short.Text != "fine" {
		t.Fatalf("short answer changed: %q", short.Text)
	}
}
