package workflows

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
)

// scheduledHarness is the prompt harness with ScheduledPrompt registered;
// childIDs records the workflow id of every child the run starts.
func scheduledHarness(t *testing.T) (*harness, *[]string) {
	h := newHarness(t)
	h.env.RegisterWorkflowWithOptions(ScheduledPrompt, workflow.RegisterOptions{Name: ScheduledPromptWorkflowName})
	ids := &[]string{}
	h.env.SetOnChildWorkflowStartedListener(func(info *workflow.Info, _ workflow.Context, _ converter.EncodedValues) {
		*ids = append(*ids, info.WorkflowExecution.ID)
	})
	return h, ids
}

func scheduledInput(h *harness, prefix, sessionID string, faults ...string) ScheduledPromptInput {
	p := input(faults...)
	p.SessionID = ""
	p.Workspace = h.workspace
	return ScheduledPromptInput{ScheduleID: "nightly", SessionPrefix: prefix, SessionID: sessionID, Prompt: p}
}

func (h *harness) runScheduled(in ScheduledPromptInput) (ScheduledPromptResult, error) {
	h.t.Helper()
	h.env.ExecuteWorkflow(ScheduledPromptWorkflowName, in)
	if !h.env.IsWorkflowCompleted() {
		h.t.Fatal("workflow did not complete")
	}
	var res ScheduledPromptResult
	err := h.env.GetWorkflowResult(&res)
	return res, err
}

// SPEC 16 (session naming): a fresh-session schedule's run names its
// session prefix-<scheduled time in UTC> and runs the prompt as a child
// under that session's workflow id, so the session holds the prompt.
func TestScheduledPrompt_FreshSessionFromScheduledTime(t *testing.T) {
	h, ids := scheduledHarness(t)
	at := time.Date(2026, 12, 4, 3, 0, 0, 0, time.FixedZone("CET", 3600))
	if err := h.env.SetTypedSearchAttributesOnStart(temporal.NewSearchAttributes(saScheduledStart.ValueSet(at))); err != nil {
		t.Fatal(err)
	}
	res, err := h.runScheduled(scheduledInput(h, "nightly", ""))
	if err != nil {
		t.Fatalf("scheduled prompt: %v", err)
	}
	const want = "nightly-20261204T020000Z"
	if res.SessionID != want || res.Status != agent.StatusCompleted || res.Prompt == nil || res.Prompt.Text != "done" {
		t.Fatalf("result %+v (prompt %+v), want session %s completed with the answer", res, res.Prompt, want)
	}
	if len(*ids) != 1 || (*ids)[0] != WorkflowID(want) {
		t.Fatalf("child workflows %v, want one: %s", *ids, WorkflowID(want))
	}
	sess, err := h.store.Load(want)
	if err != nil {
		t.Fatalf("session %s: %v", want, err)
	}
	if !hasUserText(sess.Entries, "fix the bug") {
		t.Fatalf("session %s lacks the prompt's message: %+v", want, sess.Entries)
	}
}

// SPEC 16 (busy session): a named-session run whose session still runs
// a workflow starts no prompt and says why, without failing.
func TestScheduledPrompt_BusySessionIsSkipped(t *testing.T) {
	h, _ := scheduledHarness(t)
	// The run itself holds session-s1's id: a start under it conflicts,
	// as with a prompt still running there.
	h.env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: WorkflowID("s1")})
	res, err := h.runScheduled(scheduledInput(h, "", "s1"))
	if err != nil {
		t.Fatalf("busy run failed: %v", err)
	}
	if res.Status != ScheduledStatusSkipped || res.SessionID != "s1" || !strings.Contains(res.Reason, "session s1 is busy") || res.Prompt != nil {
		t.Fatalf("result %+v, want skipped: session s1 is busy", res)
	}
	if len(h.calls) != 0 {
		t.Fatalf("%d model calls, want none", len(h.calls))
	}
}

// SPEC 16: a named session takes the prompt of every run: two runs one
// after the other both complete in it (its workflow id is reused).
func TestScheduledPrompt_NamedSessionRunsAgain(t *testing.T) {
	h, ids := scheduledHarness(t)
	twice := func(ctx workflow.Context, in ScheduledPromptInput) ([]ScheduledPromptResult, error) {
		var out []ScheduledPromptResult
		for i := range 2 {
			cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: "scheduled-nightly-" + string(rune('a'+i))})
			var r ScheduledPromptResult
			if err := workflow.ExecuteChildWorkflow(cctx, ScheduledPromptWorkflowName, in).Get(ctx, &r); err != nil {
				return out, err
			}
			out = append(out, r)
		}
		return out, nil
	}
	h.env.RegisterWorkflowWithOptions(twice, workflow.RegisterOptions{Name: "twice"})
	h.env.ExecuteWorkflow("twice", scheduledInput(h, "", "daily"))
	var res []ScheduledPromptResult
	if err := h.env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Status != agent.StatusCompleted || res[1].Status != agent.StatusCompleted || res[1].SessionID != "daily" {
		t.Fatalf("results %+v, want two completed runs in session daily", res)
	}
	n := 0
	for _, id := range *ids {
		if id == WorkflowID("daily") {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("children %v, want session-daily twice", *ids)
	}
	sess, err := h.store.Load("daily")
	if err != nil {
		t.Fatal(err)
	}
	users := 0
	for _, e := range sess.Entries {
		if e.Message != nil && e.Message.Role == agent.RoleUser {
			users++
		}
	}
	if users != 2 {
		t.Fatalf("session daily has %d user messages, want 2", users)
	}
}

// SPEC 16: a scheduled prompt that fails fails its run with the
// prompt's error type, its result in the details.
func TestScheduledPrompt_FailedPromptFailsTheRun(t *testing.T) {
	h, _ := scheduledHarness(t)
	_, err := h.runScheduled(scheduledInput(h, "", "s2", "401 invalid x-api-key"))
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != ErrTypePromptFailed {
		t.Fatalf("error %v, want a %s application error", err, ErrTypePromptFailed)
	}
	var res ScheduledPromptResult
	if err := appErr.Details(&res); err != nil || res.SessionID != "s2" || res.Status != agent.StatusFailed || res.Prompt == nil {
		t.Fatalf("details %+v (%v), want the failed prompt of session s2", res, err)
	}
}

// Bad input is refused in one line before any child starts.
func TestScheduledPromptInput_Validate(t *testing.T) {
	p := input()
	p.SessionID = ""
	for name, tc := range map[string]struct {
		in   ScheduledPromptInput
		want string
	}{
		"neither":    {ScheduledPromptInput{Prompt: p}, "give a session prefix or a session id"},
		"both":       {ScheduledPromptInput{SessionPrefix: "a", SessionID: "b", Prompt: p}, "give a session prefix or a session id"},
		"bad prefix": {ScheduledPromptInput{SessionPrefix: "a/b", Prompt: p}, `session prefix "a/b"`},
		"bad id":     {ScheduledPromptInput{SessionID: "a b", Prompt: p}, "invalid session id"},
	} {
		err := tc.in.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", name, err, tc.want)
		}
	}
	if err := (ScheduledPromptInput{SessionPrefix: "nightly", Prompt: p}).Validate(); err != nil {
		t.Errorf("valid input refused: %v", err)
	}
}

func hasUserText(entries []session.Entry, text string) bool {
	for _, e := range entries {
		if e.Message != nil && e.Message.Role == agent.RoleUser && strings.Contains(e.Message.Text(), text) {
			return true
		}
	}
	return false
}
