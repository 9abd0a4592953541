package workflows

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
)

// nextPrompt is a harness for another prompt of the same session (the
// same store and workspace): a test environment runs one workflow.
func (h *harness) nextPrompt() *harness {
	n := newHarness(h.t)
	n.store, n.acts.Sessions, n.workspace = h.store, h.store, h.workspace
	return n
}

// Issue 23: a session's tools and approval policy are recorded by its
// first prompt; a later prompt whose sender asks for no approval still
// waits for it, and says in an event that the session's settings were
// used.
func TestSessionSettings_LaterPromptUsesTheSessions(t *testing.T) {
	h := newHarness(t)
	approveWhenAsked(h)
	first := h.approvalInput(0, `tool:bash {"command":"echo 1 > one.txt"}`, `text:one`)
	if res, err := h.run(first); err != nil || res.Text != "one" {
		t.Fatalf("prompt 1: %+v %v", res, err)
	}
	kept, err := h.store.Aside("s1", session.SettingsKey)
	if err != nil || !strings.Contains(string(kept), `"requireApproval":["bash","write"]`) {
		t.Fatalf("recorded settings %s %v", kept, err)
	}

	n := h.nextPrompt()
	var asked bool
	n.at(time.Minute, func() {
		if st := n.state(); len(st.PendingApprovals) == 1 {
			asked = true
			n.approveCall(st.PendingApprovals[0].ToolCallID, "u1", true, "", &updateOutcome{})
		}
	})
	second := n.toolInput(`tool:bash {"command":"echo 2 > two.txt"}`, `text:two`)
	if res, err := n.run(second); err != nil || res.Text != "two" {
		t.Fatalf("prompt 2: %+v %v", res, err)
	}
	if !asked {
		t.Fatal("prompt 2 ran bash without asking: the sender's settings won over the session's")
	}
	var note string
	for _, e := range n.events() {
		if e.Type == agent.EventSessionSettings {
			note = e.Reason
		}
	}
	if !strings.Contains(note, "tools.requireApproval") || strings.Contains(note, "tools.enabled") {
		t.Fatalf("session_settings event %q, want it to name tools.requireApproval (and not tools.enabled, the same in both)", note)
	}
}

// Issue 23, spec 14.2.5: the session's budget (budget.session.*) is recorded by its
// first prompt like its tools: a later prompt whose sender asks for a
// higher cap stops at the session's (and says so), while a sender's
// tighter cap applies to its own prompt.
func TestSessionSettings_SessionBudgetCannotBeRaisedByALaterPrompt(t *testing.T) {
	h := newHarness(t)
	first := h.toolInput(`text:first`)
	first.Budget.SessionMaxTokens = 1 // its answer (which stands) spends more
	if _, err := h.run(first); err != nil {
		t.Fatal(err)
	}

	n := h.nextPrompt()
	raised := n.toolInput(`text:never`)
	raised.Budget.SessionMaxTokens = 1_000_000
	_, err := n.run(raised)
	if status, msg := promptStatus(t, err); status != agent.StatusFailed || !strings.HasPrefix(msg, "budget.session.maxTokens 1 reached") || len(n.calls) != 0 {
		t.Fatalf("prompt 2 with a raised cap: %s %q after %d calls, want the session's cap of 1, no call", status, msg, len(n.calls))
	}
	var note string
	for _, e := range n.events() {
		if e.Type == agent.EventSessionSettings {
			note = e.Reason
		}
	}
	if !strings.Contains(note, "budget.session.maxTokens") {
		t.Fatalf("session_settings event %q, want it to name budget.session.maxTokens", note)
	}

	// A session without a cap: a sender's own cap applies to its prompt.
	o := newHarness(t)
	if _, err := o.run(o.toolInput(`text:uncapped`)); err != nil {
		t.Fatal(err)
	}
	m := o.nextPrompt()
	capped := m.toolInput(`text:never`)
	capped.Budget.SessionMaxTokens = 1
	_, err = m.run(capped)
	if status, msg := promptStatus(t, err); status != agent.StatusFailed || !strings.HasPrefix(msg, "budget.session.maxTokens 1 reached") {
		t.Fatalf("a sender's tighter cap: %s %q, want it applied", status, msg)
	}
}

// approveWhenAsked approves the first call that waits, a minute in.
func approveWhenAsked(h *harness) {
	h.at(time.Minute, func() {
		if st := h.state(); len(st.PendingApprovals) == 1 {
			h.approveCall(st.PendingApprovals[0].ToolCallID, "u0", true, "", &updateOutcome{})
		}
	})
}

// Issue 23: a model call's row in the Temporal Web UI names its model and
// turn, bounded to 200 bytes however long the model's name.
func TestModelCallSummary_NamesModelAndTurn(t *testing.T) {
	got := modelCallSummary(activities.ModelRef{Provider: "anthropic", Name: "claude-sonnet-4-5"}, 3, "e1-007")
	if got != "anthropic/claude-sonnet-4-5 · turn 3 · e1-007" {
		t.Fatalf("summary %q", got)
	}
	long := modelCallSummary(activities.ModelRef{Provider: "openrouter", Name: strings.Repeat("ü", 300)}, 1, "e1")
	if len(long) > maxActivitySummaryBytes || !utf8.ValidString(long) || !strings.HasPrefix(long, "openrouter/üü") {
		t.Fatalf("long summary %q (%d bytes)", long, len(long))
	}
}
