package workflows

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
)

// signalMessage sends a steer or follow_up signal.
func (h *harness) signalMessage(name, msg string) {
	h.env.SignalWorkflow(name, agent.UserMessagePayload{Message: msg})
}

// at runs fn at virtual time d after the start.
func (h *harness) at(d time.Duration, fn func()) { h.env.RegisterDelayedCallback(fn, d) }

// signalDuringFirstTool sends each message as signal name once the
// prompt's first tool call has started, and returns the state queried
// after the workflow handled them, before that call goes on to run.
//
// A virtual-time callback (at) cannot promise "during the tool call"
// (during_test.go): under -race on a loaded machine the activities before
// the tool outlasted a 200 ms callback; the steers then came before the
// tool started, it was skipped, and the queue was empty again by the
// 500 ms query.
func (h *harness) signalDuringFirstTool(name string, msgs ...string) *agent.State {
	return h.duringFirstTool(func() {
		for _, m := range msgs {
			h.signalMessage(name, m)
		}
	})
}

// duringFirstTool runs fn on the test environment's loop once the
// prompt's first tool call has started, and returns the state queried
// after the workflow handled what fn sent, before that call goes on to
// run.
func (h *harness) duringFirstTool(fn func()) *agent.State {
	during := new(agent.State)
	var once sync.Once
	h.runTool = func(ctx context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		var err error
		once.Do(func() {
			if err = h.onLoop(ctx, "the signals during the first tool call", fn); err != nil {
				return
			}
			// Posted after fn's signals, so it runs once the workflow
			// has handled them.
			err = h.onLoop(ctx, "the state query after them", func() { *during = h.state() })
		})
		if err != nil {
			return activities.RunToolResult{}, err
		}
		return h.acts.RunTool(ctx, in)
	}
	return during
}

// userTexts returns the texts of the user messages on the branch of leaf.
func (h *harness) userTexts(leaf string) []string {
	var out []string
	for _, e := range h.branch(leaf) {
		if e.Message != nil && e.Message.Role == agent.RoleUser {
			out = append(out, e.Message.Text())
		}
	}
	return out
}

// toolResultTexts returns the tool results on the branch of leaf as
// "toolName: text" in order, marking errors with "!".
func (h *harness) toolResultTexts(leaf string) []string {
	var out []string
	for _, e := range h.branch(leaf) {
		if e.Message != nil && e.Message.Role == agent.RoleToolResult {
			mark := ""
			if e.Message.IsError {
				mark = "!"
			}
			out = append(out, mark+e.Message.ToolName+": "+e.Message.Text())
		}
	}
	return out
}

func countType(evs []agent.Event, typ string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func exists(dir, name string) bool {
	_, err := os.Stat(filepath.Join(dir, name))
	return err == nil
}

// Steering: a steer sent while the first call of a batch runs lets that
// call finish, skips the calls not started yet with "Skipped due to queued
// user message." (every call still has its result, in call order), and
// the loop goes on with the steering message as the next user message.
func TestSteer_SkipsRemainingCallsAndContinues(t *testing.T) {
	h := newHarness(t)
	during := h.signalDuringFirstTool(agent.SignalSteer, "stop, use c.txt instead")
	res, err := h.run(h.toolInput(
		`tools:[{"name":"bash","arguments":{"command":"echo a > a.txt"}},`+
			`{"name":"write","arguments":{"path":"b.txt","content":"b"}},{"name":"ls","arguments":{}}]`,
		`text:ok, c.txt it is`,
	))
	if err != nil || res.Text != "ok, c.txt it is" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if !exists(h.workspace, "a.txt") || exists(h.workspace, "b.txt") {
		t.Fatalf("a.txt %t b.txt %t: the running call finishes, the others never run", exists(h.workspace, "a.txt"), exists(h.workspace, "b.txt"))
	}
	if during.PendingMessageCount != 1 {
		t.Fatalf("pendingMessageCount during the batch = %d, want 1", during.PendingMessageCount)
	}
	got := h.toolResultTexts(res.LeafID)
	want := []string{"bash: (no output)", "!write: " + SkippedForSteerMessage, "!ls: " + SkippedForSteerMessage}
	if len(got) != 3 || !strings.HasPrefix(got[0], "bash: ") || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("tool results %q, want %q", got, want)
	}
	if u := h.userTexts(res.LeafID); strings.Join(u, "|") != "fix the bug|stop, use c.txt instead" {
		t.Fatalf("user messages %q", u)
	}
	if got := roles(h.branch(res.LeafID)); strings.Join(got, ",") != "user,assistant,toolResult,toolResult,toolResult,user,assistant" {
		t.Fatalf("branch %v", got)
	}
	evs := h.events()
	// The second turn opens with the steering message.
	var turn2 []string
	for i, e := range evs {
		if e.Type == agent.EventTurnStart && e.Turn == 2 {
			for _, f := range evs[i : i+4] {
				role := ""
				if f.Message != nil {
					role = string(f.Message.Role)
				}
				turn2 = append(turn2, f.Type+":"+role)
			}
		}
	}
	if strings.Join(turn2, ",") != "turn_start:,message_start:user,message_end:user,message_start:assistant" {
		t.Fatalf("turn 2 opens with %v", turn2)
	}
	if countType(evs, agent.EventAgentStart) != 1 || countType(evs, agent.EventAgentEnd) != 1 {
		t.Fatalf("one agent run: %v", types(evs))
	}
	if len(h.calls) != 2 || h.calls[1].LeafID == "" {
		t.Fatalf("model calls %d", len(h.calls))
	}
	sess, err := h.store.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := sess.Get(h.calls[1].LeafID); !ok || e.Message == nil || e.Message.Text() != "stop, use c.txt instead" {
		t.Fatalf("second model call starts at %+v, want the steering message", e.Message)
	}
	if st := h.state(); st.PendingMessageCount != 0 {
		t.Fatalf("pendingMessageCount after delivery = %d", st.PendingMessageCount)
	}
}

// Follow-up: a follow_up sent during the tool call does not skip it; it
// is delivered when the loop would otherwise end, and the prompt goes on
// with it in the same agent run.
func TestFollowUp_DeliveredWhenTheLoopWouldEnd(t *testing.T) {
	h := newHarness(t)
	during := h.signalDuringFirstTool(agent.SignalFollowUp, "now write the tests")
	res, err := h.run(h.toolInput(
		`tools:[{"name":"bash","arguments":{"command":"echo a > a.txt"}},{"name":"write","arguments":{"path":"b.txt","content":"b"}}]`,
		`text:fixed`,
		`text:tests written`,
	))
	if err != nil || res.Text != "tests written" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if during.PendingMessageCount != 1 {
		t.Fatalf("pendingMessageCount during the first tool call = %d, want 1", during.PendingMessageCount)
	}
	if !exists(h.workspace, "a.txt") || !exists(h.workspace, "b.txt") {
		t.Fatal("a follow-up must not skip tool calls")
	}
	if got := roles(h.branch(res.LeafID)); strings.Join(got, ",") != "user,assistant,toolResult,toolResult,assistant,user,assistant" {
		t.Fatalf("branch %v", got)
	}
	evs := h.events()
	if countType(evs, agent.EventAgentEnd) != 1 || countType(evs, agent.EventTurnStart) != 3 || countType(evs, agent.EventPromptEnd) != 1 {
		t.Fatalf("events %v", types(evs))
	}
}

// Modes: one-at-a-time delivers one queued message per delivery (the
// next one at the next delivery point); all delivers the whole queue as
// consecutive user messages of one turn. For steer and follow_up alike.
func TestQueueModes_OneAtATimeVsAll(t *testing.T) {
	for _, tc := range []struct {
		name, signal, mode string
		// branch and model calls the prompt ends with
		branch string
		calls  int
	}{
		{"steer one-at-a-time", agent.SignalSteer, agent.QueueModeOneAtATime,
			"user,assistant,toolResult,user,assistant,user,assistant", 3},
		{"steer all", agent.SignalSteer, agent.QueueModeAll,
			"user,assistant,toolResult,user,user,assistant", 2},
		{"follow-up one-at-a-time", agent.SignalFollowUp, agent.QueueModeOneAtATime,
			"user,assistant,toolResult,assistant,user,assistant,user,assistant", 4},
		{"follow-up default mode", agent.SignalFollowUp, "",
			"user,assistant,toolResult,assistant,user,assistant,user,assistant", 4},
		{"follow-up all", agent.SignalFollowUp, agent.QueueModeAll,
			"user,assistant,toolResult,assistant,user,user,assistant", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			during := h.signalDuringFirstTool(tc.signal, "first", "second")
			in := h.toolInput(`tool:bash {"command":"true"}`, `text:a`, `text:b`, `text:c`)
			in.Agent.SteeringMode, in.Agent.FollowUpMode = tc.mode, tc.mode
			res, err := h.run(in)
			if err != nil {
				t.Fatalf("prompt: %v", err)
			}
			if during.PendingMessageCount != 2 {
				t.Fatalf("pendingMessageCount = %d, want 2", during.PendingMessageCount)
			}
			want := queueMode(tc.mode)
			if during.SteeringMode != want || during.FollowUpMode != want {
				t.Fatalf("modes in state %q %q, want %q", during.SteeringMode, during.FollowUpMode, want)
			}
			if got := strings.Join(roles(h.branch(res.LeafID)), ","); got != tc.branch {
				t.Fatalf("branch %s, want %s", got, tc.branch)
			}
			if len(h.calls) != tc.calls {
				t.Fatalf("model calls %d, want %d", len(h.calls), tc.calls)
			}
			if u := h.userTexts(res.LeafID); strings.Join(u, "|") != "fix the bug|first|second" {
				t.Fatalf("user messages %q", u)
			}
			if st := h.state(); st.PendingMessageCount != 0 {
				t.Fatalf("pendingMessageCount at the end = %d", st.PendingMessageCount)
			}
		})
	}
}

// A prompt that fails with messages still queued returns them
// (undelivered), so nothing a user sent disappears silently.
func TestFollowUp_UndeliveredOnFailureAreReturned(t *testing.T) {
	h := newHarness(t)
	h.signalDuringFirstTool(agent.SignalFollowUp, "and then this")
	in := h.toolInput(`tool:bash {"command":"true"}`, e503)
	in.Retry.Enabled = false
	_, err := h.run(in)
	var appErr *temporal.ApplicationError
	var res PromptResult
	if !errors.As(err, &appErr) || appErr.Details(&res) != nil {
		t.Fatalf("error %v, want a failed prompt", err)
	}
	if res.Status != agent.StatusFailed || strings.Join(res.Undelivered, "|") != "and then this" {
		t.Fatalf("result %+v, want failed with the follow-up undelivered", res)
	}
}

// Issue 23 (nothing typed is lost): a steer and a follow-up accepted
// while a retry waits never reach the model when abort_retry cancels that
// retry; the prompt hands them back on its prompt_end (and its result),
// each with its kind and the reason, before the prompt's last event.
func TestSteer_AcceptedDuringRetryIsHandedBackWhenTheRetryIsCancelled(t *testing.T) {
	h := newHarness(t)
	// In the retry's wait (no activity runs, so the offsets are virtual
	// time): a steer, a follow-up, then abort_retry.
	h.whenState(retrying, func() {
		h.signalMessage(agent.SignalSteer, "use the other file")
		h.at(200*time.Millisecond, func() { h.signalMessage(agent.SignalFollowUp, "then run the tests") })
		h.at(500*time.Millisecond, func() { h.env.SignalWorkflow(agent.SignalAbortRetry, nil) })
	})
	_, err := h.run(input(e503, e503))
	var canErr *temporal.CanceledError
	var res PromptResult
	if !errors.As(err, &canErr) || canErr.Details(&res) != nil {
		t.Fatalf("error %v, want the prompt cancelled by abort_retry", err)
	}
	want := []agent.UndeliveredMessage{
		{Kind: agent.SignalSteer, Text: "use the other file", Reason: ReasonRetryCancelled},
		{Kind: agent.SignalFollowUp, Text: "then run the tests", Reason: ReasonRetryCancelled},
	}
	if len(h.calls) != 1 {
		t.Fatalf("model calls %d, want 1 (the cancelled retry never calls)", len(h.calls))
	}
	if !slices.Equal(res.UndeliveredMessages, want) || strings.Join(res.Undelivered, "|") != "use the other file|then run the tests" {
		t.Fatalf("result undelivered %+v / %q, want %+v", res.UndeliveredMessages, res.Undelivered, want)
	}
	evs := h.events()
	end := evs[len(evs)-1]
	if end.Type != agent.EventPromptEnd || !slices.Equal(end.UndeliveredMessages, want) || len(end.Undelivered) != 2 {
		t.Fatalf("last event %+v, want prompt_end handing back %+v", end, want)
	}
	if st := h.state(); st.PendingMessageCount != 0 {
		t.Fatalf("pendingMessageCount after the end = %d, want 0 (handed back)", st.PendingMessageCount)
	}
}

// approveCall sends approve_tool and records the outcome in *out.
type updateOutcome struct {
	rejected, failed error
	accepted         bool
}

func (h *harness) approveCall(id, updateID string, approved bool, reason string, out *updateOutcome) {
	h.env.UpdateWorkflow(agent.UpdateApproveTool, updateID, &testsuite.TestUpdateCallback{
		OnAccept:   func() { out.accepted = true },
		OnReject:   func(err error) { out.rejected = err },
		OnComplete: func(_ any, err error) { out.failed = err },
	}, agent.ApproveToolPayload{ToolCallID: id, Approved: approved, Reason: reason})
}

// approvalInput is a prompt whose bash calls need approval.
func (h *harness) approvalInput(timeoutMs int64, script ...string) PromptInput {
	in := h.toolInput(script...)
	in.Approval = ToolApproval{Approval: agent.Approval{RequireApproval: []string{"bash", "write"}, ApprovalTimeoutMs: timeoutMs}}
	return in
}

// Approval: a call of a tool in tools.requireApproval emits
// tool_approval_request, is listed in state and the current details, and
// waits (durably, on virtual time: an hour here) until approve_tool
// approves it; then it runs.
func TestApproval_ApprovedCallRuns(t *testing.T) {
	h := newHarness(t)
	var during agent.State
	var details string
	var out updateOutcome
	h.at(time.Hour, func() {
		during = h.state()
		details = h.currentDetails()
		if len(during.PendingApprovals) == 1 {
			h.approveCall(during.PendingApprovals[0].ToolCallID, "u1", true, "", &out)
		}
	})
	res, err := h.run(h.approvalInput(0, `tool:bash {"command":"echo hi > hi.txt"}`, `text:done`))
	if err != nil || res.Text != "done" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if len(during.PendingApprovals) != 1 || during.PendingApprovals[0].ToolName != "bash" ||
		!strings.Contains(string(during.PendingApprovals[0].Args), "hi.txt") || during.PendingApprovals[0].ExpiresAt != nil {
		t.Fatalf("pending approvals %+v", during.PendingApprovals)
	}
	id := during.PendingApprovals[0].ToolCallID
	if want := "Waiting for approval of bash " + id; !strings.HasPrefix(details, want) {
		t.Fatalf("current details %q, want %q…", details, want)
	}
	if !out.accepted || out.rejected != nil || out.failed != nil {
		t.Fatalf("update %+v", out)
	}
	if !exists(h.workspace, "hi.txt") {
		t.Fatal("the approved call did not run")
	}
	evs := h.events()
	req, ok := findEvent(evs, agent.EventToolApprovalRequest)
	if !ok || req.ToolCallID != id || req.ToolName != "bash" {
		t.Fatalf("tool_approval_request %+v", req)
	}
	start, _ := findEvent(evs, agent.EventToolExecutionStart)
	if start.Seq < req.Seq || start.Time.Sub(req.Time) < time.Hour {
		t.Fatalf("the call started at %v, asked at %v: it must wait for the decision", start.Time, req.Time)
	}
	if st := h.state(); len(st.PendingApprovals) != 0 {
		t.Fatalf("pending approvals after the decision %+v", st.PendingApprovals)
	}
}

// Approval: a denial becomes the call's error result with the reason; the
// command never runs and the model continues.
func TestApproval_DeniedCallGetsTheReason(t *testing.T) {
	h := newHarness(t)
	var out updateOutcome
	h.at(time.Minute, func() {
		st := h.state()
		if len(st.PendingApprovals) == 1 {
			h.approveCall(st.PendingApprovals[0].ToolCallID, "u1", false, "not on main", &out)
		}
	})
	res, err := h.run(h.approvalInput(0, `tool:bash {"command":"echo hi > hi.txt"}`, `text:ok, I will not`))
	if err != nil || res.Text != "ok, I will not" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if exists(h.workspace, "hi.txt") {
		t.Fatal("a denied call ran")
	}
	if got := h.toolResultTexts(res.LeafID); len(got) != 1 || got[0] != "!bash: Tool call denied by user: not on main" {
		t.Fatalf("tool results %q", got)
	}
	if len(h.tools) != 0 || len(h.calls) != 2 {
		t.Fatalf("tool activities %d model calls %d, want 0 and 2", len(h.tools), len(h.calls))
	}
}

// Approval: with tools.approvalTimeoutMs a call not decided in time is
// denied when the durable timer fires (virtual time).
func TestApproval_TimeoutDenies(t *testing.T) {
	h := newHarness(t)
	var during agent.State
	h.whenState(approvalPending, func() { during = h.state() })
	res, err := h.run(h.approvalInput(30000, `tool:write {"path":"w.txt","content":"x"}`, `text:gave up`))
	if err != nil || res.Text != "gave up" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if got := h.toolResultTexts(res.LeafID); len(got) != 1 || got[0] != "!write: Tool call denied: no one approved it within 30s (tools.approvalTimeoutMs)" {
		t.Fatalf("tool results %q", got)
	}
	if len(during.PendingApprovals) != 1 || during.PendingApprovals[0].ExpiresAt == nil {
		t.Fatalf("pending approvals %+v", during.PendingApprovals)
	}
	evs := h.events()
	req, _ := findEvent(evs, agent.EventToolApprovalRequest)
	end, _ := findEvent(evs, agent.EventToolExecutionEnd)
	if d := end.Time.Sub(req.Time); d < 30*time.Second || d > 31*time.Second {
		t.Fatalf("denied after %v, want 30s", d)
	}
	if exists(h.workspace, "w.txt") {
		t.Fatal("the call ran")
	}
}

// Approval: the validator rejects an unknown toolCallId and one already
// decided (rejected updates never reach history); parallel calls wait
// together and run once both are approved.
func TestApproval_ValidatorRejectsUnknownAndDecidedIDs(t *testing.T) {
	h := newHarness(t)
	for _, f := range []string{"a.txt", "b.txt"} {
		if err := os.WriteFile(filepath.Join(h.workspace, f), []byte(f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	var first, again, unknown, empty, second updateOutcome
	h.at(time.Minute, func() {
		for _, p := range h.state().PendingApprovals {
			ids = append(ids, p.ToolCallID)
		}
		if len(ids) == 2 {
			h.approveCall(ids[0], "u1", true, "", &first)
		}
	})
	h.at(2*time.Minute, func() {
		if len(ids) == 2 {
			h.approveCall(ids[0], "u2", false, "", &again)
			h.approveCall("call_nope", "u3", true, "", &unknown)
			h.approveCall("", "u4", true, "", &empty)
		}
	})
	h.at(3*time.Minute, func() {
		if len(ids) == 2 {
			h.approveCall(ids[1], "u5", true, "", &second)
		}
	})
	in := h.toolInput(`tools:[{"name":"read","arguments":{"path":"a.txt"}},{"name":"read","arguments":{"path":"b.txt"}}]`, `text:read both`)
	in.Approval.RequireApproval = []string{"read"}
	res, err := h.run(in)
	if err != nil || res.Text != "read both" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if len(ids) != 2 {
		t.Fatalf("pending approvals %v, want both reads", ids)
	}
	if !first.accepted || !second.accepted || first.failed != nil || second.failed != nil {
		t.Fatalf("approvals %+v %+v", first, second)
	}
	for name, tc := range map[string]struct {
		o    updateOutcome
		want string
	}{
		"decided": {again, "approve_tool: tool call " + ids[0] + " was already approved"},
		"unknown": {unknown, "approve_tool: tool call call_nope is not waiting for approval (waiting: " + ids[1] + ")"},
		"empty":   {empty, "approve_tool: toolCallId is empty"},
	} {
		if tc.o.accepted || tc.o.rejected == nil || !strings.Contains(tc.o.rejected.Error(), tc.want) {
			t.Errorf("%s: %+v, want rejected with %q", name, tc.o, tc.want)
		}
	}
	if got := h.toolResultTexts(res.LeafID); len(got) != 2 || got[0] != "read: a.txt" || got[1] != "read: b.txt" {
		t.Fatalf("tool results %q", got)
	}
}

// Approval: abort while a call waits ends the wait; the call gets the
// aborted result without running and the prompt closes as Canceled.
func TestApproval_AbortWhileWaiting(t *testing.T) {
	h := newHarness(t)
	h.at(time.Minute, func() { h.env.SignalWorkflow(agent.SignalAbort, nil) })
	_, err := h.run(h.approvalInput(0, `tool:bash {"command":"echo hi > hi.txt"}`, `text:never`))
	if !temporal.IsCanceledError(err) {
		t.Fatalf("error %v, want the run to close as Canceled", err)
	}
	if status, _ := promptStatus(t, err); status != agent.StatusAborted {
		t.Fatalf("status %q", status)
	}
	if exists(h.workspace, "hi.txt") || len(h.tools) != 0 {
		t.Fatal("the call ran")
	}
	evs := h.events()
	end, ok := findEvent(evs, agent.EventToolExecutionEnd)
	if !ok || !end.IsError || end.ToolResult == nil || end.ToolResult.Content[0].Text != ToolAbortedMessage {
		t.Fatalf("tool_execution_end %+v", end)
	}
	if st := h.state(); len(st.PendingApprovals) != 0 || st.Status != agent.StatusAborted {
		t.Fatalf("state %+v", st)
	}
}

// Steering while a call waits for approval ends the wait: the call is
// skipped like any call not started, and the steering message is next.
func TestApproval_SteerWhileWaitingSkipsTheCall(t *testing.T) {
	h := newHarness(t)
	h.at(time.Minute, func() { h.signalMessage(agent.SignalSteer, "do not run that") })
	res, err := h.run(h.approvalInput(0, `tool:bash {"command":"echo hi > hi.txt"}`, `text:ok`))
	if err != nil || res.Text != "ok" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if got := h.toolResultTexts(res.LeafID); len(got) != 1 || got[0] != "!bash: "+SkippedForSteerMessage {
		t.Fatalf("tool results %q", got)
	}
	if u := h.userTexts(res.LeafID); len(u) != 2 || u[1] != "do not run that" {
		t.Fatalf("user messages %q", u)
	}
}

// Issue 14: a prompt the user cancelled closes as Canceled (not Failed),
// with its result (status aborted, or failed with "Retry cancelled") in
// the details; a real failure still closes as Failed.
func TestPrompt_UserCancellationClosesAsCanceled(t *testing.T) {
	for _, tc := range []struct {
		name, signal, status string
		script               []string
		canceled             bool
	}{
		{"abort", agent.SignalAbort, agent.StatusAborted, []string{e503, e503}, true},
		{"abort_retry", agent.SignalAbortRetry, agent.StatusFailed, []string{e503, e503}, true},
		{"real failure", "", agent.StatusFailed, []string{"400 invalid request"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			if tc.signal != "" {
				h.whenState(retrying, func() { h.env.SignalWorkflow(tc.signal, nil) })
			}
			_, err := h.run(input(tc.script...))
			if temporal.IsCanceledError(err) != tc.canceled {
				t.Fatalf("error %v: canceled %t, want %t", err, temporal.IsCanceledError(err), tc.canceled)
			}
			if status, _ := promptStatus(t, err); status != tc.status {
				t.Fatalf("status %q, want %q", status, tc.status)
			}
		})
	}
}

// Continue-as-new carries the queue: a steer queued during the last tool
// batch of a run is delivered by the next run, and a follow-up still
// queued is delivered at its end.
func TestSteer_QueueCarriedAcrossContinueAsNew(t *testing.T) {
	h := newHarness(t)
	during := h.duringFirstTool(func() {
		h.signalMessage(agent.SignalSteer, "steer me")
		h.signalMessage(agent.SignalFollowUp, "then this")
	})
	in := h.toolInput(`tool:bash {"command":"true"}`, `text:steered`, `text:followed`)
	in.Agent.ContinueAsNewEvents = 20
	h.env.SetCurrentHistoryLength(25)
	next := h.continued(in)
	c := next.Continued
	if c == nil || len(c.Queue) != 2 || c.Queue[0].Text != "steer me" || c.Queue[0].ID != "m1" || c.Queue[1].Kind != agent.SignalFollowUp || c.Queue[1].Text != "then this" || c.QueueSeq != 2 {
		t.Fatalf("carried %+v", c)
	}
	if during.PendingMessageCount != 2 || len(h.tools) != 1 {
		t.Fatalf("pendingMessageCount during the tool call = %d, %d tool calls, want 2 and 1", during.PendingMessageCount, len(h.tools))
	}
	if st := h.state(); st.PendingMessageCount != 2 {
		t.Fatalf("pendingMessageCount at continue-as-new = %d", st.PendingMessageCount)
	}

	h2 := newHarness(t)
	h2.store, h2.acts.Sessions = h.store, h.store
	h2.workspace = h.workspace
	res, err := h2.run(next)
	if err != nil || res.Text != "followed" {
		t.Fatalf("continued run: %+v %v", res, err)
	}
	if u := h.userTexts(res.LeafID); strings.Join(u, "|") != "fix the bug|steer me|then this" {
		t.Fatalf("user messages %q", u)
	}
	evs := h2.events()
	if countType(evs, agent.EventAgentStart) != 0 || countType(evs, agent.EventAgentEnd) != 1 {
		t.Fatalf("continued run events %v", types(evs))
	}
}

// currentDetails reads the workflow's current details through the
// __temporal_workflow_metadata query.
func (h *harness) currentDetails() string {
	h.t.Helper()
	v, err := h.env.QueryWorkflow("__temporal_workflow_metadata")
	if err != nil {
		h.t.Fatalf("query metadata: %v", err)
	}
	var md sdkpb.WorkflowMetadata
	if err := v.Get(&md); err != nil {
		h.t.Fatalf("decode metadata: %v", err)
	}
	return md.GetCurrentDetails()
}
