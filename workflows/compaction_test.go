package workflows

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/compaction"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/retry"
)

// compactHarness is the prompt harness plus the Summarize activity and the
// Compact workflow, recording every Summarize input.
type compactHarness struct {
	*harness
	sums []activities.SummarizeInput
	// duringSummary, when set, runs on the test environment's loop while
	// each summary call is in flight, before it goes on to run.
	duringSummary func()
}

func newCompactHarness(t *testing.T) *compactHarness {
	t.Helper()
	h := &compactHarness{harness: newHarness(t)}
	h.env.RegisterActivityWithOptions(func(ctx context.Context, in activities.SummarizeInput) (activities.SummarizeResult, error) {
		h.sums = append(h.sums, in)
		if h.duringSummary != nil {
			if err := h.onLoop(ctx, "the callback during the summary call", h.duringSummary); err != nil {
				return activities.SummarizeResult{}, err
			}
		}
		return h.acts.Summarize(ctx, in)
	}, activity.RegisterOptions{Name: activities.SummarizeName})
	h.env.RegisterWorkflowWithOptions(Compact, workflow.RegisterOptions{Name: CompactWorkflowName})
	return h
}

// useStore makes h work on an existing session store (a later prompt of
// the same session).
func (h *compactHarness) useStore(s *session.Store) {
	h.store, h.acts.Sessions = s, s
}

// compactInput is input(faults...) with compaction on: keep 150 tokens,
// so a seeded history has something to summarise.
func compactInput(faults ...string) PromptInput {
	in := input(faults...)
	in.Compaction = compaction.DefaultSettings()
	in.Compaction.KeepRecentTokens = 150
	return in
}

// seedHistory writes two earlier turns of 100-token messages to session
// s1 and returns the id of the last entry.
func seedHistory(t *testing.T, s *session.Store) string {
	t.Helper()
	parent := ""
	var entries []session.Entry
	for i, role := range []agent.Role{agent.RoleUser, agent.RoleAssistant, agent.RoleUser, agent.RoleAssistant} {
		m := agent.TextMessage(role, strings.Repeat(string(rune('a'+i)), 400))
		if role == agent.RoleAssistant {
			m.StopReason = agent.StopReasonStop
		}
		id := fmt.Sprintf("old-%d", i)
		entries = append(entries, session.Entry{Type: session.TypeMessage, ID: id, ParentID: parent, Timestamp: time.Unix(0, 0).UTC(), Message: &m})
		parent = id
	}
	if _, err := s.Append("s1", entries...); err != nil {
		t.Fatal(err)
	}
	return parent
}

func compactionEntries(t *testing.T, s *session.Store) []session.Entry {
	t.Helper()
	sess, err := s.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	var out []session.Entry
	for _, e := range sess.Entries {
		if e.Type == session.TypeCompaction {
			out = append(out, e)
		}
	}
	return out
}

func findEvent(evs []agent.Event, typ string) (agent.Event, bool) {
	for _, e := range evs {
		if e.Type == typ {
			return e, true
		}
	}
	return agent.Event{}, false
}

// SPEC 1/9: an overflow error is not retried; it is compacted (the error
// leaves the run context, the summary and the kept messages replace it)
// and the turn continues once and succeeds. No auto_retry events.
func TestCompaction_OverflowCompactsAndContinuesTheTurn(t *testing.T) {
	h := newCompactHarness(t)
	seedHistory(t, h.store)
	res, err := h.run(compactInput("overflow"))
	if err != nil || res.Status != agent.StatusCompleted || res.Text != "done" {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	evs := runEvents(h.events())
	want := []string{
		agent.EventAgentStart, agent.EventMessageEnd, agent.EventAgentEnd,
		agent.EventAutoCompactionStart, agent.EventUsage, agent.EventAutoCompactionEnd, // the summary call's usage (issue 39)
		agent.EventAgentStart, agent.EventMessageEnd, agent.EventAgentEnd, agent.EventPromptEnd,
	}
	if got := runTypes(evs); !equal(got, want) {
		t.Fatalf("event order %v\nwant %v", got, want)
	}
	if got := retryEvents(t, evs); len(got) != 0 {
		t.Fatalf("retry events %v, want none", got)
	}
	if !evs[2].WillRetry || evs[2].ErrorMessage == "" || evs[8].WillRetry {
		t.Fatalf("agent_end willRetry: first %+v, last %+v", evs[2], evs[8])
	}
	if evs[3].Reason != CompactionReasonOverflow {
		t.Fatalf("auto_compaction_start reason %q", evs[3].Reason)
	}
	end := evs[5]
	if end.Aborted || !end.WillRetry || end.ErrorMessage != "" || end.Result == nil ||
		!strings.HasPrefix(end.Result.Summary, "## Goal\n") || end.Result.FirstKeptEntryID != "old-2" || end.Result.TokensBefore != 403 {
		t.Fatalf("auto_compaction_end %+v result %+v", end, end.Result)
	}

	// The session file: the error entry stays, the compaction entry is its
	// sibling under the user message, and the retried call ran on the
	// compacted context.
	entries := compactionEntries(t, h.store)
	if len(entries) != 1 || entries[0].ID != end.Result.EntryID || entries[0].ParentID != h.calls[0].LeafID ||
		entries[0].Summary != end.Result.Summary || entries[0].FirstKeptEntryID != "old-2" || entries[0].TokensBefore != 403 {
		t.Fatalf("compaction entries %+v, want one matching %+v under %s", entries, end.Result, h.calls[0].LeafID)
	}
	if len(h.calls) != 2 || h.calls[1].LeafID != entries[0].ID {
		t.Fatalf("calls %+v, want the retried call to continue from the compaction entry", h.calls)
	}
	sess, _ := h.store.Load("s1")
	if e, ok := sess.Get(h.calls[0].EntryID); !ok || e.Message.StopReason != agent.StopReasonError {
		t.Fatalf("overflow error entry lost: %+v", e)
	}
	var roles []string
	for _, m := range sess.Context(res.LeafID) {
		roles = append(roles, string(m.Role))
	}
	if got := strings.Join(roles, " "); got != "compactionSummary user assistant user assistant" {
		t.Fatalf("context after the prompt: %s", got)
	}
	if st := h.state(); !st.AutoCompactionEnabled || st.IsCompacting || st.MessageCount != 5 {
		t.Fatalf("state %+v", st)
	}
}

// SPEC 1: a retryable error retries and skips the compaction checks; an
// overflow later in the same turn ends the chain and goes to compaction.
func TestCompaction_RetryableErrorRetriesAndSkipsCompaction(t *testing.T) {
	h := newCompactHarness(t)
	seedHistory(t, h.store)
	res, err := h.run(compactInput(e503, "overflow"))
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	want := []string{
		agent.EventAgentStart, agent.EventMessageEnd, agent.EventAgentEnd, agent.EventAutoRetryStart,
		agent.EventAgentStart, agent.EventMessageEnd, agent.EventAgentEnd, agent.EventAutoRetryEnd,
		agent.EventAutoCompactionStart, agent.EventUsage, agent.EventAutoCompactionEnd, // the summary call's usage (issue 39)
		agent.EventAgentStart, agent.EventMessageEnd, agent.EventAgentEnd, agent.EventPromptEnd,
	}
	evs := runEvents(h.events())
	if got := runTypes(evs); !equal(got, want) {
		t.Fatalf("event order %v\nwant %v", got, want)
	}
	if end := evs[7]; end.Success || end.Attempt != 1 || end.FinalError != scripted.OverflowText {
		t.Fatalf("auto_retry_end %+v, want the chain ended by the overflow", end)
	}
	if evs[8].Reason != CompactionReasonOverflow || !evs[10].WillRetry || evs[10].Result == nil {
		t.Fatalf("compaction events %+v %+v", evs[8], evs[10])
	}
}

// SPEC 9: a second overflow right after an overflow compaction fails the
// prompt with a clear message; there is no second compaction.
func TestCompaction_SecondOverflowFailsWithoutLoop(t *testing.T) {
	h := newCompactHarness(t)
	seedHistory(t, h.store)
	_, err := h.run(compactInput("overflow", "overflow", "overflow"))
	status, msg := promptStatus(t, err)
	if status != agent.StatusFailed || msg != compaction.OverflowRecoveryFailed {
		t.Fatalf("status %q error %q", status, msg)
	}
	if len(h.calls) != 2 || len(h.sums) != 1 || len(compactionEntries(t, h.store)) != 1 {
		t.Fatalf("%d model calls, %d summaries, want 2 and 1", len(h.calls), len(h.sums))
	}
	var willRetry []bool
	for _, e := range h.events() {
		if e.Type == agent.EventAgentEnd {
			willRetry = append(willRetry, e.WillRetry)
		}
	}
	if len(willRetry) != 2 || !willRetry[0] || willRetry[1] {
		t.Fatalf("agent_end willRetry %v, want [true false]", willRetry)
	}
}

// SPEC 9 / compaction.enabled=false: no compaction; an overflow fails the
// prompt with a message saying how to continue.
func TestCompaction_DisabledOverflowFailsClearly(t *testing.T) {
	h := newCompactHarness(t)
	seedHistory(t, h.store)
	in := compactInput("overflow")
	in.Compaction.Enabled = false
	_, err := h.run(in)
	if status, msg := promptStatus(t, err); status != agent.StatusFailed || msg != compaction.OverflowCompactionDisabled {
		t.Fatalf("status %q error %q", status, msg)
	}
	evs := h.events()
	if _, ok := findEvent(evs, agent.EventAutoCompactionStart); ok || len(h.sums) != 0 {
		t.Fatal("compaction ran with compaction.enabled=false")
	}
	if e, _ := findEvent(evs, agent.EventAgentEnd); e.WillRetry {
		t.Fatal("agent_end says willRetry with compaction disabled")
	}
	if h.state().AutoCompactionEnabled {
		t.Fatal("state says autoCompactionEnabled")
	}
}

// SPEC 9 threshold: compaction.enabled=false also disables threshold
// compaction.
func TestCompaction_DisabledSkipsThreshold(t *testing.T) {
	h := newCompactHarness(t)
	seedHistory(t, h.store)
	in := compactInput()
	in.Compaction.Enabled = false
	in.Model.ContextWindow = 100
	if _, err := h.run(in); err != nil {
		t.Fatal(err)
	}
	if len(h.sums) != 0 {
		t.Fatalf("%d summaries, want none", len(h.sums))
	}
}

// SPEC 9 threshold: past contextWindow - max(reserveTokens, 15%) the
// session is compacted after the answer, without a retry; at the
// threshold it is not.
func TestCompaction_ThresholdCompactsAfterTheAnswerWithoutRetry(t *testing.T) {
	// The answer's context: the scripted model reports input = 1611
	// characters / 4 = 403 tokens (400 seeded, "fix the bug") plus 1
	// output token ("done"): 404.
	tests := []struct {
		name    string
		window  int
		reserve int
		compact bool
	}{
		{"one above the threshold", 475, 0, true},            // 475 - ceil(15% = 71.25) = 403
		{"at the threshold", 476, 0, false},                  // 476 - ceil(71.4) = 404
		{"reserve wins over 15%, one above", 603, 200, true}, // 603 - 200 = 403
		{"reserve wins over 15%, at the threshold", 604, 200, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newCompactHarness(t)
			seedHistory(t, h.store)
			in := compactInput()
			in.Model.ContextWindow, in.Compaction.ReserveTokens = tt.window, tt.reserve
			res, err := h.run(in)
			if err != nil || res.Status != agent.StatusCompleted || res.Text != "done" {
				t.Fatalf("prompt: %+v, %v", res, err)
			}
			evs := h.events()
			start, started := findEvent(evs, agent.EventAutoCompactionStart)
			if started != tt.compact {
				t.Fatalf("compacted %t, want %t (events %v)", started, tt.compact, types(evs))
			}
			if len(h.calls) != 1 {
				t.Fatalf("%d model calls, want 1 (threshold compaction never retries)", len(h.calls))
			}
			if !tt.compact {
				return
			}
			end, _ := findEvent(evs, agent.EventAutoCompactionEnd)
			if start.Reason != CompactionReasonThreshold || end.WillRetry || end.Aborted || end.Result == nil {
				t.Fatalf("compaction events %+v %+v", start, end)
			}
			if res.LeafID != end.Result.EntryID {
				t.Fatalf("prompt ends at %s, want the compaction entry %s", res.LeafID, end.Result.EntryID)
			}
			if got := types(evs)[len(evs)-4:]; !equal(got, []string{agent.EventAutoCompactionStart, agent.EventUsage, agent.EventAutoCompactionEnd, agent.EventPromptEnd}) {
				t.Fatalf("event tail %v", got)
			}
		})
	}
}

// compaction.autoContinue=false: the overflow is compacted but the turn
// is not run again; the prompt says so.
func TestCompaction_AutoContinueOffCompactsWithoutRetry(t *testing.T) {
	h := newCompactHarness(t)
	seedHistory(t, h.store)
	in := compactInput("overflow")
	in.Compaction.AutoContinue = false
	_, err := h.run(in)
	if status, msg := promptStatus(t, err); status != agent.StatusFailed || msg != OverflowNotContinuedMessage {
		t.Fatalf("status %q error %q", status, msg)
	}
	evs := h.events()
	agentEnd, _ := findEvent(evs, agent.EventAgentEnd)
	end, _ := findEvent(evs, agent.EventAutoCompactionEnd)
	if agentEnd.WillRetry || end.WillRetry || end.Result == nil || len(h.calls) != 1 {
		t.Fatalf("agent_end %+v compaction end %+v, %d calls", agentEnd, end, len(h.calls))
	}
}

// An overflow whose recent messages alone are the whole context cannot be
// recovered: the prompt fails with a message saying what to do. In a new
// session the context is the prompt alone, so the advice is a shorter
// prompt or a larger window, not keepRecentTokens.
func TestCompaction_NothingToCompactFailsTheOverflow(t *testing.T) {
	h := newCompactHarness(t)
	_, err := h.run(compactInput("overflow"))
	if status, msg := promptStatus(t, err); status != agent.StatusFailed || msg != compaction.PromptExceedsWindowMessage {
		t.Fatalf("status %q error %q", status, msg)
	}
	end, _ := findEvent(h.events(), agent.EventAutoCompactionEnd)
	if end.ErrorMessage != compaction.PromptExceedsWindowMessage || end.WillRetry || end.Result != nil {
		t.Fatalf("auto_compaction_end %+v", end)
	}
}

// Summary calls get their own classifier-driven retries on a durable
// timer (retry settings, no auto_retry events); past retry.maxRetries the
// compaction fails and so does the overflowed prompt.
func TestCompaction_SummaryErrorsRetriedWithinMaxRetries(t *testing.T) {
	tests := []struct {
		name       string
		faults     []string
		wantStatus string
		wantSums   int
		wantWaited time.Duration
	}{
		{"recovers after two errors", []string{e503, e503}, agent.StatusCompleted, 3, 6 * time.Second},
		{"gives up after maxRetries", []string{e503, e503, e503, e503}, agent.StatusFailed, 4, 14 * time.Second},
		{"fatal error is not retried", []string{"401 invalid x-api-key"}, agent.StatusFailed, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newCompactHarness(t)
			seedHistory(t, h.store)
			in := compactInput("overflow")
			in.Model.SummaryFaults = tt.faults
			_, err := h.run(in)
			status, msg := promptStatus(t, err)
			if status != tt.wantStatus {
				t.Fatalf("status %q (%s), want %q", status, msg, tt.wantStatus)
			}
			if len(h.sums) != tt.wantSums {
				t.Fatalf("%d summary attempts, want %d", len(h.sums), tt.wantSums)
			}
			for i, s := range h.sums {
				if s.Attempt != i || s.EntryID != h.sums[0].EntryID {
					t.Fatalf("attempt %d: %+v (attempts must count up under one entry id)", i, s)
				}
			}
			evs := h.events()
			if got := retryEvents(t, evs); len(got) != 0 {
				t.Fatalf("retry events %v, want none for summary retries", got)
			}
			start, _ := findEvent(evs, agent.EventAutoCompactionStart)
			end, _ := findEvent(evs, agent.EventAutoCompactionEnd)
			if waited := end.Time.Sub(start.Time); waited != tt.wantWaited {
				t.Fatalf("compaction took %v of workflow time, want %v of backoff", waited, tt.wantWaited)
			}
			if tt.wantStatus == agent.StatusFailed {
				if !strings.HasPrefix(msg, "context overflow: compaction failed: summary call failed: ") || end.ErrorMessage == "" || end.Result != nil {
					t.Fatalf("error %q, end %+v", msg, end)
				}
				if n := len(compactionEntries(t, h.store)); n != 0 {
					t.Fatalf("%d compaction entries after a failed compaction", n)
				}
			}
		})
	}
}

// SPEC 5 applied to compaction: abort during the summary call cancels it
// (auto_compaction_end{aborted:true}); the state shows isCompacting while
// it runs.
func TestCompaction_AbortDuringCompactionCancelsIt(t *testing.T) {
	h := newCompactHarness(t)
	seedHistory(t, h.store)
	in := compactInput("overflow")
	in.Model.SummaryFaults = []string{"hang"}
	var during agent.State
	h.duringSummary = func() {
		during = h.state()
		h.env.SignalWorkflow(agent.SignalAbort, nil)
	}
	_, err := h.run(in)
	if status, _ := promptStatus(t, err); status != agent.StatusAborted {
		t.Fatalf("status %q, want aborted", status)
	}
	if !during.IsCompacting || during.IsStreaming {
		t.Fatalf("state during compaction %+v, want isCompacting", during)
	}
	end, _ := findEvent(h.events(), agent.EventAutoCompactionEnd)
	if !end.Aborted || end.WillRetry || end.Result != nil {
		t.Fatalf("auto_compaction_end %+v, want aborted", end)
	}
	if st := h.state(); st.IsCompacting {
		t.Fatal("state still says isCompacting")
	}
	if len(h.calls) != 1 || len(compactionEntries(t, h.store)) != 0 {
		t.Fatalf("%d model calls, %d compaction entries after the abort", len(h.calls), len(compactionEntries(t, h.store)))
	}
}

// abort during a summary retry's backoff cancels the timer and the
// compaction.
func TestCompaction_AbortDuringSummaryBackoff(t *testing.T) {
	h := newCompactHarness(t)
	seedHistory(t, h.store)
	in := compactInput("overflow")
	in.Model.SummaryFaults = []string{e503}
	h.whenState(retrying, func() { h.env.SignalWorkflow(agent.SignalAbort, nil) })
	_, err := h.run(in)
	if status, _ := promptStatus(t, err); status != agent.StatusAborted {
		t.Fatalf("status %q, want aborted", status)
	}
	end, _ := findEvent(h.events(), agent.EventAutoCompactionEnd)
	if !end.Aborted || len(h.sums) != 1 {
		t.Fatalf("auto_compaction_end %+v after %d summary attempts", end, len(h.sums))
	}
}

// Done-when of the compaction issue: a session that grows past a small
// context window keeps working across several compactions (threshold and
// overflow), and its file shows the compaction entries.
func TestCompaction_SessionKeepsWorkingAcrossSeveralCompactions(t *testing.T) {
	var store *session.Store
	long := strings.Repeat("please refactor the parser module ", 16) // ~136 tokens
	maxContext, overflows := 0, 0
	for i := range 12 {
		h := newCompactHarness(t)
		if store == nil {
			store = h.store
		}
		h.useStore(store)
		in := compactInput()
		if i == 7 {
			in = compactInput("overflow")
		}
		in.Message = fmt.Sprintf("%d: %s", i, long)
		in.Model.ContextWindow = 1000
		in.Compaction.ReserveTokens = 100
		in.Compaction.KeepRecentTokens = 300
		res, err := h.run(in)
		if err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("prompt %d: %+v, %v", i, res, err)
		}
		for _, e := range h.events() {
			if e.Type == agent.EventAutoCompactionStart && e.Reason == CompactionReasonOverflow {
				overflows++
			}
		}
		sess, err := store.Load("s1")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range sess.Context(sess.LeafID()) {
			n += (len(m.Text()) + 3) / 4
		}
		maxContext = max(maxContext, n)
	}
	entries := compactionEntries(t, store)
	t.Logf("%d compaction entries, %d after an overflow; largest context %d tokens", len(entries), overflows, maxContext)
	if len(entries) < 3 || overflows != 1 {
		t.Fatalf("%d compaction entries (%d overflow), want at least 3 with one overflow", len(entries), overflows)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Summary, "## Goal\n") || e.FirstKeptEntryID == "" || e.TokensBefore == 0 {
			t.Fatalf("compaction entry %+v", e)
		}
	}
	if !strings.Contains(entries[len(entries)-1].Summary, "Previous summary merged: yes") {
		t.Fatalf("later compactions must merge the earlier summary:\n%s", entries[len(entries)-1].Summary)
	}
	if maxContext > 1000 {
		t.Fatalf("context reached %d tokens, past the 1000-token window", maxContext)
	}
	sess, _ := store.Load("s1")
	if ctx := sess.Context(sess.LeafID()); ctx[0].Role != agent.RoleSummary {
		t.Fatalf("final context starts with %s, want the summary", ctx[0].Role)
	}
}

// `starter compact`: the Compact workflow compacts a session outside a
// prompt, with the user's instructions; an empty or small session has
// nothing to compact.
func TestCompact_ManualCompactionWritesEntry(t *testing.T) {
	h := newCompactHarness(t)
	seedHistory(t, h.store)
	in := CompactInputFrom(compactInput(), "keep the parser API")
	in.Compaction.KeepRecentTokens = 100
	in.Compaction.Enabled = false // manual compaction ignores the automatic switch
	h.env.ExecuteWorkflow(CompactWorkflowName, in)
	var res CompactResult
	if err := h.env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.StatusCompleted || res.Result == nil || res.Result.FirstKeptEntryID != "old-3" ||
		res.LeafID != res.Result.EntryID {
		t.Fatalf("result %+v / %+v", res, res.Result)
	}
	if len(h.sums) != 1 || h.sums[0].CustomInstructions != "keep the parser API" || h.sums[0].LeafID != "old-3" {
		t.Fatalf("summarize inputs %+v", h.sums)
	}
	entries := compactionEntries(t, h.store)
	if len(entries) != 1 || entries[0].ParentID != "old-3" {
		t.Fatalf("compaction entries %+v", entries)
	}
	if evs := h.events(); len(evs) != 1 || evs[0].Type != agent.EventPromptEnd || evs[0].Status != agent.StatusCompleted {
		t.Fatalf("events %v", types(evs))
	}
}

// docs/spec.md 9: a manual compaction's summary retries are told by
// auto_retry_start / auto_retry_end (its events are otherwise only
// prompt_end), and abort_retry during the wait ends it as "Retry
// cancelled".
func TestCompact_SummaryRetriesEmitRetryEvents(t *testing.T) {
	t.Run("recovers", func(t *testing.T) {
		h := newCompactHarness(t)
		seedHistory(t, h.store)
		in := CompactInputFrom(compactInput(), "")
		in.Compaction.KeepRecentTokens = 100
		in.Model.SummaryFaults = []string{e503, e503}
		h.env.ExecuteWorkflow(CompactWorkflowName, in)
		var res CompactResult
		if err := h.env.GetWorkflowResult(&res); err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("result %+v, %v", res, err)
		}
		evs := h.events()
		if got := strings.Join(types(evs), " "); got != "auto_retry_start auto_retry_start auto_retry_end prompt_end" {
			t.Fatalf("events %s", got)
		}
		if s := evs[0]; s.Attempt != 1 || s.DelayMs != 2000 || s.ErrorMessage != e503 {
			t.Errorf("first auto_retry_start %+v", s)
		}
		if end := evs[2]; !end.Success || end.Attempt != 2 {
			t.Errorf("auto_retry_end %+v, want success after attempt 2", end)
		}
	})
	t.Run("abort_retry", func(t *testing.T) {
		h := newCompactHarness(t)
		seedHistory(t, h.store)
		in := CompactInputFrom(compactInput(), "")
		in.Compaction.KeepRecentTokens = 100
		in.Model.SummaryFaults = []string{e503}
		h.whenState(retrying, func() { h.env.SignalWorkflow(agent.SignalAbortRetry, nil) })
		h.env.ExecuteWorkflow(CompactWorkflowName, in)
		if err := h.env.GetWorkflowError(); err == nil {
			t.Fatal("a compaction whose retry was cancelled completed")
		}
		evs := h.events()
		if got := strings.Join(types(evs), " "); got != "auto_retry_start auto_retry_end prompt_end" {
			t.Fatalf("events %s", got)
		}
		if end := evs[1]; end.Success || end.FinalError != retry.CancelledMessage {
			t.Errorf("auto_retry_end %+v, want Retry cancelled", end)
		}
		if pe := evs[2]; pe.Status != agent.StatusFailed || !strings.Contains(pe.ErrorMessage, retry.CancelledMessage) {
			t.Errorf("prompt_end %+v", pe)
		}
	})
}

func TestCompact_NothingToCompact(t *testing.T) {
	for _, seeded := range []bool{false, true} {
		t.Run(fmt.Sprintf("seeded=%t", seeded), func(t *testing.T) {
			h := newCompactHarness(t)
			if seeded {
				seedHistory(t, h.store)
			}
			in := CompactInputFrom(compactInput(), "")
			in.Compaction.KeepRecentTokens = compaction.DefaultSettings().KeepRecentTokens
			h.env.ExecuteWorkflow(CompactWorkflowName, in)
			var res CompactResult
			if err := h.env.GetWorkflowResult(&res); err != nil {
				t.Fatal(err)
			}
			if res.Status != agent.StatusCompleted || !res.NothingToCompact || res.Result != nil {
				t.Fatalf("result %+v", res)
			}
			if n := len(compactionEntries0(h.store)); n != 0 {
				t.Fatalf("%d compaction entries", n)
			}
		})
	}
}

// compactionEntries0 counts compaction entries of a session that may not
// exist yet.
func compactionEntries0(s *session.Store) []session.Entry {
	sess, err := s.Load("s1")
	if err != nil {
		return nil
	}
	var out []session.Entry
	for _, e := range sess.Entries {
		if e.Type == session.TypeCompaction {
			out = append(out, e)
		}
	}
	return out
}
