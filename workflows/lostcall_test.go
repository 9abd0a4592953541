package workflows

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
)

// assistantEnds are the message_end events of assistant messages.
func assistantEnds(evs []agent.Event) []agent.Event {
	var out []agent.Event
	for _, e := range evs {
		if e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleAssistant {
			out = append(out, e)
		}
	}
	return out
}

// checkFileAgrees checks that the session file records every assistant
// message_end as the events say (stop reason, error, text), and that no
// entry of the file says "aborted".
func (h *harness) checkFileAgrees(evs []agent.Event) {
	h.t.Helper()
	sess, err := h.store.Load("s1")
	if err != nil {
		h.t.Fatal(err)
	}
	for _, e := range sess.Entries {
		if m := e.Message; m != nil && m.StopReason == agent.StopReasonAborted {
			h.t.Fatalf("session file entry %s says %q %q, but nobody aborted the prompt", e.ID, m.StopReason, m.ErrorMessage)
		}
	}
	for _, ev := range assistantEnds(evs) {
		e, ok := sess.Get(ev.EntryID)
		if !ok || e.Message == nil {
			h.t.Fatalf("message_end %s has no entry in the session file", ev.EntryID)
		}
		got := fmt.Sprintf("%s %q %q", e.Message.StopReason, e.Message.ErrorMessage, e.Message.Text())
		want := fmt.Sprintf("%s %q %q", ev.Message.StopReason, ev.Message.ErrorMessage, ev.Message.Text())
		if got != want {
			h.t.Fatalf("entry %s: the session file says %s, the events say %s", ev.EntryID, got, want)
		}
	}
}

// Issue 15 item 4, spec 13.4.7: the SDK cancels a model call's context when it cannot
// heartbeat (the server is unreachable: the heartbeat's error is the
// cause) or when the server no longer knows the call (NotFound). Nobody
// aborted the prompt: the activity writes nothing, the server times the
// call out, and the workflow's connection error is what the events and
// the session file say; the call is retried and the prompt completes.
// Before the fix the activity wrote "aborted" first, the workflow took
// that stored record for the call's answer and ended the prompt aborted.
func TestPrompt_CallCancelledByAFailingHeartbeatIsRetriedNotAborted(t *testing.T) {
	for name, cause := range map[string]error{
		"server unreachable": serviceerror.NewUnavailable("connection refused"),
		"call unknown":       serviceerror.NewNotFound("invalid activityID or activity already timed out or invoking workflow is completed"),
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.callModel = func(ctx context.Context, n int, in activities.CallModelInput) (activities.CallModelResult, error) {
				if n > 1 {
					return h.acts.CallModel(ctx, in)
				}
				// What the SDK does when the heartbeat fails: cancel the
				// activity's context with the heartbeat's error as cause.
				cctx, cancel := context.WithCancelCause(ctx)
				defer cancel(nil)
				time.AfterFunc(100*time.Millisecond, func() { cancel(cause) })
				if _, err := h.acts.CallModel(cctx, in); err == nil {
					t.Error("the cancelled call reported success")
				}
				// The server never got a completion it accepts (a cancel
				// nobody requested is refused): it times the call out.
				return activities.CallModelResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
			}
			res, err := h.run(input("hang:30s"))
			if err != nil || res.Status != agent.StatusCompleted || res.Text != "done" {
				t.Fatalf("prompt: %+v %v, want completed with the retried call's answer", res, err)
			}
			if len(h.calls) != 2 {
				t.Fatalf("%d model calls, want 2 (the lost one and its retry)", len(h.calls))
			}
			evs := h.events()
			ends := assistantEnds(evs)
			if len(ends) != 2 || ends[0].Message.StopReason != agent.StopReasonError ||
				!strings.HasPrefix(ends[0].Message.ErrorMessage, "connection error") {
				t.Fatalf("assistant message_ends %+v, want a connection error then the answer", ends)
			}
			h.checkFileAgrees(evs)
		})
	}
}

// Issue 15 item 4, spec 13.4.6: the worker dies after CallModel wrote the model's
// answer and before Temporal recorded the activity's completion (the
// server times the call out). The workflow uses the stored answer: the
// events and the file agree, and the model is not called again.
func TestPrompt_AnswerWrittenByALostWorkerIsUsedNotCalledAgain(t *testing.T) {
	h := newHarness(t)
	h.callModel = func(ctx context.Context, n int, in activities.CallModelInput) (activities.CallModelResult, error) {
		res, err := h.acts.CallModel(ctx, in)
		if n == 1 {
			if err != nil {
				t.Errorf("first call: %v", err)
			}
			// The worker is gone before it reports the completion.
			return activities.CallModelResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
		}
		return res, err
	}
	res, err := h.run(input("text:the stored answer"))
	if err != nil || res.Status != agent.StatusCompleted || res.Text != "the stored answer" {
		t.Fatalf("prompt: %+v %v, want completed with the stored answer", res, err)
	}
	if len(h.calls) != 1 {
		t.Fatalf("%d model calls, want 1 (the stored answer is used)", len(h.calls))
	}
	evs := h.events()
	if ends := assistantEnds(evs); len(ends) != 1 || ends[0].Message.Text() != "the stored answer" {
		t.Fatalf("assistant message_ends %+v, want the stored answer once", ends)
	}
	for _, e := range evs {
		if e.Type == agent.EventAutoRetryStart {
			t.Fatalf("the workflow retried a call whose answer it has: %+v", e)
		}
	}
	h.checkFileAgrees(evs)
}

// Issue 15 item 4, spec 13.4.7, for tools: the SDK cancels a bash call's context when
// its heartbeat fails (the server unreachable, or no longer knowing the
// call). The command is killed (its process group), but nobody aborted
// it: the activity writes nothing, the server times the call out, and the
// workflow's unknown-outcome result is what the events and the session
// file say; the prompt goes on to the next model call. Before the fix the
// activity wrote "Tool call aborted" first and the workflow, finding that
// stored result, told the model the user had aborted the call.
func TestPrompt_BashCancelledByAFailingHeartbeatIsAnUnknownOutcome(t *testing.T) {
	for name, cause := range map[string]error{
		"server unreachable": serviceerror.NewUnavailable("connection refused"),
		"call unknown":       serviceerror.NewNotFound("invalid activityID or activity already timed out or invoking workflow is completed"),
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.runTool = func(ctx context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
				// What the SDK does when the heartbeat fails: cancel the
				// activity's context with the heartbeat's error as cause.
				cctx, cancel := context.WithCancelCause(ctx)
				defer cancel(nil)
				time.AfterFunc(300*time.Millisecond, func() { cancel(cause) })
				if _, err := h.acts.RunTool(cctx, in); err == nil {
					t.Error("the cancelled call reported success")
				}
				// The server never got a completion it accepts: it times
				// the call out.
				return activities.RunToolResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil)
			}
			start := time.Now()
			res, err := h.run(h.toolInput(`tool:bash {"command":"sleep 30; echo late > late.txt"}`, `text:done`))
			if err != nil || res.Status != agent.StatusCompleted || res.Text != "done" {
				t.Fatalf("prompt: %+v %v, want it to go on and complete", res, err)
			}
			if d := time.Since(start); d > 15*time.Second {
				t.Fatalf("the call took %v: the command was not killed", d)
			}
			if _, err := os.Stat(filepath.Join(h.workspace, "late.txt")); err == nil {
				t.Fatal("late.txt exists: the command kept running")
			}
			if len(h.calls) != 2 {
				t.Fatalf("%d model calls, want 2 (the model is told the outcome)", len(h.calls))
			}
			want := fmt.Sprintf(ToolOutcomeUnknownMessage, "heartbeat") + activities.EvidenceHead + activities.EvidenceNone
			evs := h.events()
			var end agent.Event
			for _, e := range evs {
				if e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleToolResult {
					end = e
				}
			}
			if end.Message == nil || end.Message.Text() != want || !end.Message.IsError {
				t.Fatalf("tool result event %+v, want %q", end.Message, want)
			}
			sess, err := h.store.Load("s1")
			if err != nil {
				t.Fatal(err)
			}
			if e, ok := sess.Get(end.EntryID); !ok || e.Message == nil || e.Message.Text() != want {
				t.Fatalf("session file result %+v, want %q", e.Message, want)
			}
			h.checkFileAgrees(evs)
		})
	}
}

// The counterpart: a bash call the user aborts is still "Tool call
// aborted" in the events and in the session file, and the prompt ends
// aborted.
func TestPrompt_BashAbortedByTheUserIsStillRecordedAborted(t *testing.T) {
	h := newHarness(t)
	h.abortWhileToolRuns("started")
	_, err := h.run(h.toolInput(`tool:bash {"command":"touch started; sleep 30; echo late > late.txt"}`, `text:never`))
	if status, _ := promptStatus(t, err); status != agent.StatusAborted {
		t.Fatalf("status %q, want aborted", status)
	}
	var end agent.Event
	for _, e := range h.events() {
		if e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleToolResult {
			end = e
		}
	}
	if end.Message == nil || end.Message.Text() != ToolAbortedMessage {
		t.Fatalf("tool result event %+v, want %q", end.Message, ToolAbortedMessage)
	}
	sess, _ := h.store.Load("s1")
	if e, ok := sess.Get(end.EntryID); !ok || e.Message == nil || e.Message.Text() != ToolAbortedMessage {
		t.Fatalf("session file result %+v, want %q", e.Message, ToolAbortedMessage)
	}
}
