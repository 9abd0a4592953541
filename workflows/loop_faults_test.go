package workflows

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
)

// lines counts the lines of a file in the workspace (0 when missing).
func (h *harness) lines(name string) int {
	b, err := os.ReadFile(filepath.Join(h.workspace, name))
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "\n")
}

// Issue 10 (abort): an abort that lands while an answer with tool calls
// completes does not leave those calls without results: each gets the
// aborted result (none runs), the turn ends, and the session stays
// usable by providers, which refuse a tool call without its result.
func TestLoop_AbortAsAnAnswerWithToolCallsCompletes(t *testing.T) {
	h := newHarness(t)
	h.afterCall = func(n int) {
		if n == 1 {
			h.env.SignalWorkflow(agent.SignalAbort, nil)
		}
	}
	_, err := h.run(h.toolInput(
		`tools:[{"name":"bash","arguments":{"command":"echo ran >> effect.txt"}},{"name":"ls","arguments":{}}]`,
		`text:never`))
	if status, _ := promptStatus(t, err); status != agent.StatusAborted {
		t.Fatalf("status %q, want aborted", status)
	}
	if n := h.lines("effect.txt"); n != 0 {
		t.Fatalf("bash ran %d times after the abort", n)
	}
	if len(h.tools) != 0 || len(h.calls) != 1 {
		t.Fatalf("tool activities %d, model calls %d; want 0 and 1", len(h.tools), len(h.calls))
	}
	st := h.state()
	sess, err := h.store.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	got := h.toolResultTexts(sess.LeafID())
	if len(got) != 2 || got[0] != "!bash: "+ToolAbortedMessage || got[1] != "!ls: "+ToolAbortedMessage {
		t.Fatalf("tool results on the branch %q (leaf %s, state %+v)", got, sess.LeafID(), st)
	}
	// What the next prompt would send: every call has its result.
	sent := llm.SendableMessages(sess.Context(sess.LeafID()))
	var calls, results int
	for _, m := range sent {
		calls += len(m.ToolCalls())
		if m.Role == agent.RoleToolResult && m.Text() != llm.NoToolResultText {
			results++
		}
	}
	if calls != 2 || results != 2 {
		t.Fatalf("next context has %d calls and %d recorded results", calls, results)
	}
	evs := h.events()
	var starts, ends int
	for _, e := range evs {
		switch e.Type {
		case agent.EventToolExecutionStart:
			starts++
		case agent.EventToolExecutionEnd:
			ends++
			if !e.IsError {
				t.Fatalf("tool_execution_end not an error: %+v", e)
			}
		}
	}
	if starts != 2 || ends != 2 {
		t.Fatalf("tool_execution_start %d end %d, want 2 and 2", starts, ends)
	}
	if got := withoutTypes(evs)[len(evs)-3:]; !equal(got, []string{"turn_end", "agent_end", "prompt_end"}) {
		t.Fatalf("last events %v", got)
	}
}

// Issue 10 (parallel calls): the read-only calls of one answer run at the
// same time. Each call's activity waits until all three have started, so a
// loop that ran them one by one would never get past the first; the last
// call finishes first, and the results still follow the calls' order.
func TestLoop_ReadOnlyCallsRunTogether(t *testing.T) {
	h := newHarness(t)
	for _, f := range []string{"a.txt", "b.txt", "c.txt"} {
		if err := os.WriteFile(filepath.Join(h.workspace, f), []byte("content of "+f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	started := 0
	all := make(chan struct{})
	var finished []string
	h.runTool = func(ctx context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		mu.Lock()
		started++
		if started == 3 {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(5 * time.Second):
			return activities.RunToolResult{}, temporal.NewNonRetryableApplicationError("calls did not run together", "Test", nil)
		}
		// The later the call, the sooner it finishes.
		delay := map[string]time.Duration{"call_0_0": 300 * time.Millisecond, "call_0_1": 150 * time.Millisecond}[in.ToolCallID]
		time.Sleep(delay)
		res, err := h.acts.RunTool(ctx, in)
		mu.Lock()
		finished = append(finished, in.ToolCallID)
		mu.Unlock()
		return res, err
	}
	res, err := h.run(h.toolInput(
		`tools:[{"name":"read","arguments":{"path":"a.txt"}},{"name":"grep","arguments":{"pattern":"content","path":"b.txt"}},{"name":"read","arguments":{"path":"c.txt"}}]`,
		`text:done`))
	if err != nil {
		t.Fatalf("prompt: %v", err)
	}
	if strings.Join(finished, ",") != "call_0_2,call_0_1,call_0_0" {
		t.Fatalf("calls finished in order %v, want the last first", finished)
	}
	got := h.toolResultTexts(res.LeafID)
	if len(got) != 3 || got[0] != "read: content of a.txt" || !strings.HasPrefix(got[1], "grep: ") || got[2] != "read: content of c.txt" {
		t.Fatalf("results in branch order %q", got)
	}
}

// Issue 10 (exactly once): bash has one attempt. When its worker dies mid
// command (the activity stops heartbeating), the workflow does not run it
// again: the model is told the command may or may not have completed, and
// the loop goes on.
func TestLoop_BashWorkerLostTellsTheModelAndNeverRunsItAgain(t *testing.T) {
	h := newHarness(t)
	attempts := 0
	h.runTool = func(ctx context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		attempts++
		// The worker starts the command, which has its effect, then the
		// worker vanishes: no heartbeat, no result written.
		cmd := exec.Command("sh", "-c", "echo ran >> effect.txt")
		cmd.Dir = h.workspace
		if err := cmd.Run(); err != nil {
			return activities.RunToolResult{}, err
		}
		select {
		case <-ctx.Done():
		case <-time.After(1200 * time.Millisecond): // past the heartbeat timeout
		}
		return activities.RunToolResult{}, temporal.NewApplicationError("worker gone", "Test")
	}
	in := h.toolInput(`tool:bash {"command":"echo ran >> effect.txt"}`, `text:checked`)
	in.HeartbeatTimeoutMs = 500
	res, err := h.run(in)
	if err != nil || res.Text != "checked" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if attempts != 1 {
		t.Fatalf("bash activity attempts %d, want 1", attempts)
	}
	if n := h.lines("effect.txt"); n != 1 {
		t.Fatalf("the command ran %d times", n)
	}
	got := h.toolResultTexts(res.LeafID)
	// With what the command changed since the turn's checkpoint (spec 20.3).
	want := "!bash: " + strings.Replace(ToolOutcomeUnknownMessage, "%s", "heartbeat", 1) + activities.EvidenceHead + "added effect.txt."
	if len(got) != 1 || !strings.HasPrefix(got[0], want) || !strings.Contains(got[0], "+ran") {
		t.Fatalf("tool result %q, want %q and a diff", got, want)
	}
}

// Issue 10 (exactly once): a worker that shuts down while bash runs stops
// the command and writes no result; the model is told the command was
// interrupted and may or may not have completed; it is not run again.
func TestLoop_BashInterruptedByWorkerShutdownIsNotRunAgain(t *testing.T) {
	h := newHarness(t)
	attempts := 0
	h.runTool = func(ctx context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		attempts++
		return activities.RunToolResult{}, temporal.NewApplicationError("worker stopped while bash ran: context canceled",
			activities.ErrTypeWorkerStopped)
	}
	res, err := h.run(h.toolInput(`tool:bash {"command":"make"}`, `text:checked`))
	if err != nil || res.Text != "checked" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if attempts != 1 {
		t.Fatalf("bash activity attempts %d, want 1", attempts)
	}
	if got := h.toolResultTexts(res.LeafID); len(got) != 1 || got[0] != "!bash: "+ToolInterruptedMessage+activities.EvidenceHead+activities.EvidenceNone {
		t.Fatalf("tool result %q", got)
	}
}

// Issue 10 (exactly once): entry ids come from the run, not from a random
// side effect. A first workflow task that is lost after its local activity
// wrote the user message is retried with the same ids, so the write is
// idempotent: two executions of the same run choose the same ids.
func TestEntryIDs_SameRunChoosesTheSameIDs(t *testing.T) {
	start := time.Date(2026, 12, 3, 10, 0, 0, 123, time.UTC)
	ids := make([]string, 2)
	for i := range ids {
		h := newHarness(t)
		h.env.SetStartTime(start)
		res, err := h.run(input())
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = res.LeafID
	}
	if ids[0] != ids[1] {
		t.Fatalf("the same run chose ids %q and %q", ids[0], ids[1])
	}
	h := newHarness(t)
	h.env.SetStartTime(start.Add(time.Millisecond))
	res, err := h.run(input())
	if err != nil {
		t.Fatal(err)
	}
	if res.LeafID == ids[0] {
		t.Fatalf("another run chose the same id %q", res.LeafID)
	}
}

// Issue 14 (what the Temporal UI shows): the current details say what the
// prompt does now — the model call, the tool call, the retry with its
// attempt and wake-up time (not a countdown that goes stale) and the
// command that cancels it as a Markdown code span (the UI renders
// details as Markdown, which would turn its "--" into an en dash) — and
// are cleared in between.
func TestPrompt_CurrentDetailsSayWhatRunsNow(t *testing.T) {
	h := newHarness(t)
	h.env.SetTestTimeout(30 * time.Second)
	in := h.toolInput(`tool:bash {"command":"sleep 1"}`, `503 Service Unavailable`, `hang:2s`, `text:done`)
	start := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	h.env.SetStartTime(start)
	seen := map[string]string{}
	look := func(name string) func() {
		return func() { seen[name] = h.currentDetails() }
	}
	in.Retry.BaseDelayMs = 60000 // the backoff after the 503: a minute of virtual time
	h.runTool = func(ctx context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		time.Sleep(200 * time.Millisecond)
		seen["tool"] = h.currentDetails()
		return h.acts.RunTool(ctx, in)
	}
	h.afterCall = func(n int) {
		if n == 2 { // the 503: look half-way through its backoff
			h.env.RegisterDelayedCallback(look("backoff"), 30*time.Second)
		}
		if n == 3 {
			seen["afterModel"] = h.currentDetails()
		}
	}
	res, err := h.run(in)
	if err != nil || res.Text != "done" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if d := seen["tool"]; !strings.HasPrefix(d, "Running bash sleep 1 (turn 1)") {
		t.Errorf("details during the tool call %q", d)
	}
	if d := seen["backoff"]; !strings.HasPrefix(d, "Retry 1/3 waits until 2026-12-03T09:01:") || !strings.Contains(d, "(60s after the error): 503 Service Unavailable") ||
		!strings.Contains(d, "abort_retry") || !strings.Contains(d, "`starter abort-retry --session "+in.SessionID+"`") {
		t.Errorf("details during the backoff %q", d)
	}
	if d := seen["afterModel"]; !strings.HasPrefix(d, "Calling model scripted/scripted-1 (turn 2") {
		t.Errorf("details during the model call %q", d)
	}
	if d := h.currentDetails(); d != "" {
		t.Errorf("details after the prompt %q, want none", d)
	}
}
