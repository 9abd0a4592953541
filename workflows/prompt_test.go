package workflows

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/retry"
)

const e503 = "503 Service Unavailable"

// gaps returns, for each auto_retry_start, the virtual time until the next
// agent_start (the durable backoff actually waited).
func gaps(evs []agent.Event) []time.Duration {
	var out []time.Duration
	for i, e := range evs {
		if e.Type != agent.EventAutoRetryStart {
			continue
		}
		for _, n := range evs[i+1:] {
			if n.Type == agent.EventAgentStart {
				out = append(out, n.Time.Sub(e.Time))
				break
			}
		}
	}
	return out
}

func promptStatus(t *testing.T, err error) (string, string) {
	t.Helper()
	if err == nil {
		return agent.StatusCompleted, ""
	}
	var res PromptResult
	var appErr *temporal.ApplicationError
	var canErr *temporal.CanceledError
	switch {
	case errors.As(err, &appErr):
		if err := appErr.Details(&res); err != nil {
			t.Fatalf("prompt error has no PromptResult details: %v", err)
		}
	case errors.As(err, &canErr):
		// A prompt the user cancelled (abort, abort_retry) closes as
		// Canceled with its result in the details.
		if err := canErr.Details(&res); err != nil {
			t.Fatalf("prompt cancellation has no PromptResult details: %v", err)
		}
	default:
		t.Fatalf("prompt error is neither an ApplicationError nor a cancellation: %v", err)
	}
	return res.Status, res.Error
}

// SPEC 4: defaults give 2000/4000/8000 ms; the 4th error ends the chain
// with auto_retry_end{success:false, attempt:3, finalError}.
func TestPrompt_DefaultBackoffAndMaxRetriesExceeded(t *testing.T) {
	h := newHarness(t)
	_, err := h.run(input(e503, e503, e503, e503))
	status, msg := promptStatus(t, err)
	if status != agent.StatusFailed || msg != e503 {
		t.Fatalf("status %q error %q, want failed with %q", status, msg, e503)
	}
	evs := h.events()
	want := []string{
		`{"attempt":1,"delayMs":2000,"errorMessage":"503 Service Unavailable","maxAttempts":3,"type":"auto_retry_start"}`,
		`{"attempt":2,"delayMs":4000,"errorMessage":"503 Service Unavailable","maxAttempts":3,"type":"auto_retry_start"}`,
		`{"attempt":3,"delayMs":8000,"errorMessage":"503 Service Unavailable","maxAttempts":3,"type":"auto_retry_start"}`,
		`{"attempt":3,"finalError":"503 Service Unavailable","success":false,"type":"auto_retry_end"}`,
	}
	if got := retryEvents(t, evs); !equal(got, want) {
		t.Fatalf("retry events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	g := gaps(evs)
	if len(g) != 3 || g[0] != 2*time.Second || g[1] != 4*time.Second || g[2] != 8*time.Second {
		t.Fatalf("durable waits %v, want [2s 4s 8s]", g)
	}
	if len(h.calls) != 4 {
		t.Fatalf("model calls %d, want 4", len(h.calls))
	}
}

// SPEC 3: the first successful message after retries emits
// auto_retry_end{success:true, attempt} and resets the counter.
func TestPrompt_SuccessAfterRetriesEndsChainAndResets(t *testing.T) {
	h := newHarness(t)
	res, err := h.run(input(e503, e503))
	if err != nil {
		t.Fatalf("prompt failed: %v", err)
	}
	if res.Status != agent.StatusCompleted || res.Text != "done" {
		t.Fatalf("result %+v", res)
	}
	got := retryEvents(t, h.events())
	if len(got) != 3 || got[2] != `{"attempt":2,"success":true,"type":"auto_retry_end"}` {
		t.Fatalf("retry events %v", got)
	}
	st := h.state()
	if st.RetryAttempt != 0 || st.IsRetrying || st.Status != agent.StatusCompleted {
		t.Fatalf("state after success: %+v", st)
	}
}

// SPEC 5: abort_retry during the backoff cancels the durable timer and
// emits auto_retry_end{success:false, finalError:"Retry cancelled"}.
func TestPrompt_AbortRetryDuringWaitCancels(t *testing.T) {
	h := newHarness(t)
	var during agent.State
	h.whenState(retrying, func() {
		during = h.state()
		h.env.SignalWorkflow(agent.SignalAbortRetry, nil)
	})
	_, err := h.run(input(e503, e503))
	status, msg := promptStatus(t, err)
	if status != agent.StatusFailed || !strings.HasPrefix(msg, retry.CancelledMessage) {
		t.Fatalf("status %q error %q", status, msg)
	}
	if !during.IsRetrying || during.RetryAttempt != 1 || during.PendingRetry == nil || during.PendingRetry.DelayMs != 2000 {
		t.Fatalf("state during the wait: %+v", during)
	}
	evs := h.events()
	got := retryEvents(t, evs)
	want := `{"attempt":1,"finalError":"Retry cancelled","success":false,"type":"auto_retry_end"}`
	if len(got) != 2 || got[1] != want {
		t.Fatalf("retry events %v", got)
	}
	if len(h.calls) != 1 {
		t.Fatalf("model calls %d, want 1 (the retry must not run)", len(h.calls))
	}
	if d := evs[len(evs)-1].Time.Sub(evs[0].Time); d >= 2*time.Second {
		t.Fatalf("prompt ended %v after start; the 2s timer was not cancelled", d)
	}
	if st := h.state(); st.IsRetrying || st.RetryAttempt != 0 {
		t.Fatalf("state after cancel: %+v", st)
	}
}

// SPEC 5: abort_retry outside a backoff wait is a harmless no-op.
func TestPrompt_AbortRetryOutsideWaitIsNoOp(t *testing.T) {
	h := newHarness(t)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(agent.SignalAbortRetry, nil)
	}, 50*time.Millisecond)
	res, err := h.run(input("hang:300ms"))
	if err != nil || res.Text != "done" {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	if got := retryEvents(t, h.events()); len(got) != 0 {
		t.Fatalf("retry events %v, want none", got)
	}
}

// SPEC 5: abort cancels the retry first; the prompt ends aborted.
func TestPrompt_AbortDuringWaitCancelsRetryFirst(t *testing.T) {
	h := newHarness(t)
	h.whenState(retrying, func() { h.env.SignalWorkflow(agent.SignalAbort, nil) })
	_, err := h.run(input(e503))
	if status, _ := promptStatus(t, err); status != agent.StatusAborted {
		t.Fatalf("status %q, want aborted", status)
	}
	got := retryEvents(t, h.events())
	if len(got) != 2 || !strings.Contains(got[1], `"finalError":"Retry cancelled"`) {
		t.Fatalf("retry events %v", got)
	}
	if len(h.calls) != 1 {
		t.Fatalf("model calls %d, want 1", len(h.calls))
	}
}

// SPEC 5: abort cancels the in-flight model call; the activity returns an
// aborted message, which the session keeps; a chain in progress ends.
func TestPrompt_AbortCancelsInFlightCallAndEndsChain(t *testing.T) {
	h := newHarness(t)
	// Attempt 1 fails, the retry call (the second) hangs; abort arrives
	// once it has started.
	h.callModel = func(ctx context.Context, n int, in activities.CallModelInput) (activities.CallModelResult, error) {
		if n == 2 {
			if err := h.onLoop(ctx, "abort during the retry call", func() { h.env.SignalWorkflow(agent.SignalAbort, nil) }); err != nil {
				return activities.CallModelResult{}, err
			}
		}
		return h.acts.CallModel(ctx, in)
	}
	_, err := h.run(input(e503, "hang"))
	if status, _ := promptStatus(t, err); status != agent.StatusAborted {
		t.Fatalf("status %q, want aborted", status)
	}
	got := retryEvents(t, h.events())
	want := `{"attempt":1,"finalError":"Request was aborted","success":false,"type":"auto_retry_end"}`
	if len(got) != 2 || got[1] != want {
		t.Fatalf("retry events %v, want start then %s", got, want)
	}
	sess, err := h.store.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	last := sess.Entries[len(sess.Entries)-1]
	if last.Message == nil || last.Message.StopReason != agent.StopReasonAborted {
		t.Fatalf("last session entry %+v, want the aborted assistant message", last)
	}
}

// SPEC 3/11: retry.enabled=false never starts a retry.
func TestPrompt_DisabledNeverRetries(t *testing.T) {
	h := newHarness(t)
	in := input(e503)
	in.Retry.Enabled = false
	_, err := h.run(in)
	if status, msg := promptStatus(t, err); status != agent.StatusFailed || msg != e503 {
		t.Fatalf("status %q error %q", status, msg)
	}
	if got := retryEvents(t, h.events()); len(got) != 0 {
		t.Fatalf("retry events %v, want none", got)
	}
	if len(h.calls) != 1 {
		t.Fatalf("model calls %d, want 1", len(h.calls))
	}
}

// SPEC 8: set_auto_retry reaches a running prompt as a signal; switching
// it off mid-chain stops further retries and ends the chain.
func TestPrompt_SetAutoRetrySignalMidChain(t *testing.T) {
	h := newHarness(t)
	h.whenState(retrying, func() {
		h.env.SignalWorkflow(agent.SignalSetAutoRetry, agent.SetAutoRetryPayload{Enabled: false})
	})
	_, err := h.run(input(e503, e503, e503))
	if status, _ := promptStatus(t, err); status != agent.StatusFailed {
		t.Fatalf("status %q", status)
	}
	got := retryEvents(t, h.events())
	want := []string{
		`{"attempt":1,"delayMs":2000,"errorMessage":"503 Service Unavailable","maxAttempts":3,"type":"auto_retry_start"}`,
		`{"attempt":1,"finalError":"503 Service Unavailable","success":false,"type":"auto_retry_end"}`,
	}
	if !equal(got, want) {
		t.Fatalf("retry events %v", got)
	}
	if st := h.state(); st.AutoRetryEnabled {
		t.Fatal("state still says autoRetryEnabled")
	}
}

// A set_auto_retry signal with a wrong payload is ignored with a warning;
// it neither fails the workflow task nor changes the setting.
func TestPrompt_SetAutoRetryBadPayloadIgnored(t *testing.T) {
	h := newHarness(t)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(agent.SignalSetAutoRetry, "maybe")
		h.env.SignalWorkflow(agent.SignalSetAutoRetry, map[string]int{"enabled": 3})
	}, time.Second)
	res, err := h.run(input(e503))
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if st := h.state(); !st.AutoRetryEnabled {
		t.Fatal("a bad payload switched auto-retry off")
	}
}

// SPEC 1/11: a context overflow is never retried; it goes to the
// compaction path.
func TestPrompt_OverflowNeverRetries(t *testing.T) {
	h := newHarness(t)
	_, err := h.run(input("overflow"))
	_ = err
	if got := retryEvents(t, h.events()); len(got) != 0 {
		t.Fatalf("retry events %v, want none", got)
	}
	for _, e := range h.events() {
		if e.Type == agent.EventAgentEnd && e.StopReason == agent.StopReasonError && e.ErrorMessage == "" {
			t.Fatal("agent_end without the overflow text")
		}
	}
}

// SPEC 3 [fix]: a non-retryable error in the middle of a chain ends the
// chain with auto_retry_end{success:false, finalError}.
func TestPrompt_NonRetryableErrorMidChainEndsChain(t *testing.T) {
	h := newHarness(t)
	const fatal = "401 invalid x-api-key"
	_, err := h.run(input(e503, fatal))
	if status, msg := promptStatus(t, err); status != agent.StatusFailed || msg != fatal {
		t.Fatalf("status %q error %q", status, msg)
	}
	got := retryEvents(t, h.events())
	want := `{"attempt":1,"finalError":"401 invalid x-api-key","success":false,"type":"auto_retry_end"}`
	if len(got) != 2 || got[1] != want {
		t.Fatalf("retry events %v", got)
	}
}

// SPEC 3 step 7: a usage-limit error that switches to another credential
// retries with delay 0; without another credential it waits the normal
// exponential delay.
func TestPrompt_UsageLimitSwitchRetriesAtOnce(t *testing.T) {
	const limit = "usage limit reached for this account; retry-after-ms=60000"
	for _, tc := range []struct {
		name  string
		creds []auth.Credential
		delay string
	}{
		{"switch", []auth.Credential{{ID: "a", Provider: "scripted", Secret: "sk-aaaaaaaaaaaa"}, {ID: "b", Provider: "scripted", Secret: "sk-bbbbbbbbbbbb"}}, `"delayMs":0`},
		{"no other credential", []auth.Credential{{ID: "a", Provider: "scripted", Secret: "sk-aaaaaaaaaaaa"}}, `"delayMs":2000`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, tc.creds...)
			res, err := h.run(input(limit))
			if err != nil || res.Status != agent.StatusCompleted {
				t.Fatalf("prompt: %+v %v", res, err)
			}
			got := retryEvents(t, h.events())
			if len(got) != 2 || !strings.Contains(got[0], tc.delay) {
				t.Fatalf("retry events %v, want start with %s", got, tc.delay)
			}
		})
	}
}

// SPEC 3 step 9 / SPEC 12: the failed assistant message leaves the run
// context (the retry continues from the user message) but stays in the
// session file.
func TestPrompt_ErrorDroppedFromRunContextButKeptInSession(t *testing.T) {
	h := newHarness(t)
	res, err := h.run(input(e503))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.calls) != 2 || h.calls[1].LeafID != h.calls[0].LeafID {
		t.Fatalf("retry call continued from %q, want the same leaf as the first call %q", h.calls[1].LeafID, h.calls[0].LeafID)
	}
	sess, err := h.store.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	errEntry, ok := sess.Get(h.calls[0].EntryID)
	if !ok || errEntry.Message.StopReason != agent.StopReasonError || errEntry.Message.ErrorMessage != e503 {
		t.Fatalf("session file lost the error entry: %+v", errEntry)
	}
	for _, m := range sess.Context(res.LeafID) {
		if m.StopReason == agent.StopReasonError {
			t.Fatalf("run context still holds the error message: %+v", m)
		}
	}
	if n := len(sess.Context(res.LeafID)); n != 2 {
		t.Fatalf("run context has %d messages, want user + answer", n)
	}
}

// SPEC 11: a new chain can start later, once counters are reset: the next
// prompt of the session starts again at attempt 1.
func TestPrompt_NewChainStartsAfterReset(t *testing.T) {
	h := newHarness(t)
	if _, err := h.run(input(e503)); err != nil {
		t.Fatal(err)
	}
	h2 := newHarness(t)
	h2.store, h2.acts.Sessions = h.store, h.store
	in := input(e503)
	in.Message = "and now the tests"
	if _, err := h2.run(in); err != nil {
		t.Fatal(err)
	}
	got := retryEvents(t, h2.events())
	if len(got) != 2 || !strings.Contains(got[0], `"attempt":1,`) {
		t.Fatalf("second prompt's retry events %v", got)
	}
	sess, _ := h.store.Load("s1")
	if n := len(sess.Context(sess.LeafID())); n != 4 {
		t.Fatalf("session context has %d messages after two prompts, want 4", n)
	}
}

// SPEC 6: the prompt does not complete until its chain has ended, and
// every agent_end says whether another run follows.
func TestPrompt_CompletesOnlyAfterChainEnds(t *testing.T) {
	h := newHarness(t)
	var mid agent.State
	h.whenState(func(st agent.State) bool { return retrying(st) && st.RetryAttempt == 2 }, func() { mid = h.state() })
	if _, err := h.run(input(e503, e503)); err != nil {
		t.Fatal(err)
	}
	if mid.Status != agent.StatusRunning || !mid.IsRetrying || mid.RetryAttempt != 2 {
		t.Fatalf("state during the second wait: %+v", mid)
	}
	evs := h.events()
	wantTypes := []string{
		agent.EventAgentStart, agent.EventMessageEnd, agent.EventAgentEnd, agent.EventAutoRetryStart,
		agent.EventAgentStart, agent.EventMessageEnd, agent.EventAgentEnd, agent.EventAutoRetryStart,
		agent.EventAgentStart, agent.EventMessageEnd, agent.EventAgentEnd, agent.EventAutoRetryEnd,
		agent.EventPromptEnd,
	}
	if got := runTypes(evs); !equal(got, wantTypes) {
		t.Fatalf("event order %v\nwant %v", got, wantTypes)
	}
	var willRetry []bool
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
		if e.Type == agent.EventAgentEnd {
			willRetry = append(willRetry, e.WillRetry)
		}
	}
	if len(willRetry) != 3 || !willRetry[0] || !willRetry[1] || willRetry[2] {
		t.Fatalf("agent_end willRetry %v, want [true true false]", willRetry)
	}
}

// The events query returns only the events after the given seq.
func TestPrompt_EventsQueryAfterSeq(t *testing.T) {
	h := newHarness(t)
	if _, err := h.run(input(e503)); err != nil {
		t.Fatal(err)
	}
	all := h.events()
	v, err := h.env.QueryWorkflow(agent.QueryEvents, int64(3))
	if err != nil {
		t.Fatal(err)
	}
	var tail []agent.Event
	if err := v.Get(&tail); err != nil {
		t.Fatal(err)
	}
	if len(tail) != len(all)-3 || tail[0].Seq != 4 {
		t.Fatalf("events after 3: %d events starting at %d, want %d starting at 4", len(tail), tail[0].Seq, len(all)-3)
	}
}

// SPEC 7: a model call that times out (the worker died) becomes a
// retryable "connection error" and flows through the retry policy.
func TestPrompt_ActivityTimeoutBecomesConnectionError(t *testing.T) {
	h := newHarness(t)
	in := input("hang:3s")
	in.ModelTimeoutMs = 300
	res, err := h.run(in)
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	got := retryEvents(t, h.events())
	if len(got) != 2 || !strings.Contains(got[0], "connection error") {
		t.Fatalf("retry events %v, want a connection error retry", got)
	}
}

// Bad input is rejected at once with a message naming the problem.
func TestPrompt_InvalidInputFailsClearly(t *testing.T) {
	h := newHarness(t)
	in := input()
	in.Message = "  "
	_, err := h.run(in)
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != ErrTypeBadInput || !strings.Contains(err.Error(), "message is empty") {
		t.Fatalf("error %v", err)
	}
}

var _ = session.TypeMessage

// Cancelling the workflow through Temporal (UI, `temporal workflow
// cancel`) during a backoff acts like abort: the chain ends with "Retry
// cancelled" and the run ends as cancelled.
func TestPrompt_WorkflowCancelDuringBackoff(t *testing.T) {
	h := newHarness(t)
	h.whenState(retrying, h.env.CancelWorkflow)
	_, err := h.run(input(e503))
	if !temporal.IsCanceledError(err) {
		t.Fatalf("error %v, want a cancellation", err)
	}
	got := retryEvents(t, h.events())
	if len(got) != 2 || !strings.Contains(got[1], `"finalError":"Retry cancelled"`) {
		t.Fatalf("retry events %v", got)
	}
	if st := h.state(); st.Status != agent.StatusAborted || st.IsRetrying {
		t.Fatalf("state %+v", st)
	}
}

type brokenCreds struct{}

func (brokenCreds) Select(string, string) (auth.Credential, bool, error) {
	return auth.Credential{}, false, errors.New("auth.json is readable by others; run chmod 600")
}

func (brokenCreds) MarkUsageLimit(string, string, string, int64) (auth.Switch, error) {
	return auth.Switch{}, nil
}

func (brokenCreds) Secrets() ([]string, error) { return nil, nil }

// An unusable credential store is not a network failure: the prompt fails
// at once with the store's message instead of retrying.
func TestPrompt_CredentialsErrorFailsWithoutRetry(t *testing.T) {
	h := newHarness(t)
	h.acts.Credentials = brokenCreds{}
	_, err := h.run(input())
	status, msg := promptStatus(t, err)
	if status != agent.StatusFailed || !strings.Contains(msg, "chmod 600") {
		t.Fatalf("status %q error %q", status, msg)
	}
	if got := retryEvents(t, h.events()); len(got) != 0 {
		t.Fatalf("retry events %v, want none", got)
	}
}
