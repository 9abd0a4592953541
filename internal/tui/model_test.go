package tui

import (
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

// SPEC 10: on auto_retry_end (and when the retried call starts) the
// previous Esc binding (abort) and loader come back; compaction shows its
// own loader, prefixed for an overflow, and restores the previous one.
func TestModel_LoaderAndEscBindingFollowEvents(t *testing.T) {
	d := newLiveDriver(t)
	working := "Working… (esc to abort)"
	steps := []struct {
		name   string
		events []agent.Event
		loader string
		esc    string
	}{
		{"call runs", []agent.Event{{Type: agent.EventAgentStart}}, working, agent.SignalAbort},
		{"backoff", []agent.Event{
			{Type: agent.EventMessageEnd, Message: &agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonError, ErrorMessage: "overloaded"}},
			{Type: agent.EventAgentEnd, WillRetry: true},
			{Type: agent.EventAutoRetryStart, Attempt: 2, MaxAttempts: 5, DelayMs: 4000, ErrorMessage: "overloaded"},
		}, "Retrying (2/5) in 4s… (esc to cancel)", agent.SignalAbortRetry},
		{"retried call runs", []agent.Event{{Type: agent.EventAgentStart}}, working, agent.SignalAbort},
		{"retry succeeded", []agent.Event{{Type: agent.EventAgentEnd}, {Type: agent.EventAutoRetryEnd, Success: true, Attempt: 2}}, working, agent.SignalAbort},
		{"overflow compaction", []agent.Event{{Type: agent.EventAutoCompactionStart, Reason: "overflow"}},
			"Context overflow detected, Auto-compacting… (esc to cancel)", agent.SignalAbort},
		{"compaction ended", []agent.Event{{Type: agent.EventAutoCompactionEnd, WillRetry: true,
			Result: &agent.CompactionResult{TokensBefore: 150000}}}, working, agent.SignalAbort},
		{"threshold compaction", []agent.Event{{Type: agent.EventAutoCompactionStart, Reason: "threshold"}},
			"Auto-compacting… (esc to cancel)", agent.SignalAbort},
		{"threshold compaction ended", []agent.Event{{Type: agent.EventAutoCompactionEnd}}, working, agent.SignalAbort},
		{"prompt ended", []agent.Event{{Type: agent.EventPromptEnd, Status: agent.StatusCompleted}}, "", ""},
	}
	for _, s := range steps {
		d.emit(s.events...)
		if text, esc := d.status(); text != s.loader || esc != s.esc {
			t.Errorf("%s: loader %q esc %q, want %q esc %q", s.name, text, esc, s.loader, s.esc)
		}
	}
	if strings.Contains(d.m.View(), "Retry failed") {
		t.Errorf("a successful chain shows a failure:\n%s", d.m.View())
	}
}
