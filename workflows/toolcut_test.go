package workflows

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
)

// Issue 20 item 5, spec 13.4.7: the SDK cancels a running bash call
// without the workflow asking (its heartbeat failed: the worker starved
// of CPU, or the server unreachable for a moment) and the server takes
// the failure the activity reports. The model is told that the command
// may or may not have completed, in the events and the session file;
// before the fix it was told "The tool call failed: context canceled".
func TestPrompt_BashCutByTheSDKWithoutAnAbortIsAnUnknownOutcome(t *testing.T) {
	for name, cause := range map[string]error{
		"heartbeat rpc timed out": context.DeadlineExceeded,
		"server unreachable":      serviceerror.NewUnavailable("connection refused"),
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.runTool = func(ctx context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
				// What the SDK does when a heartbeat fails: cancel the
				// activity's context with the heartbeat's error as
				// cause. The activity's error is what the worker reports.
				cctx, cancel := context.WithCancelCause(ctx)
				defer cancel(nil)
				time.AfterFunc(300*time.Millisecond, func() { cancel(cause) })
				return h.acts.RunTool(cctx, in)
			}
			res, err := h.run(h.toolInput(`tool:bash {"command":"sleep 30; echo late > late.txt"}`, `text:done`))
			if err != nil || res.Status != agent.StatusCompleted || res.Text != "done" {
				t.Fatalf("prompt: %+v %v, want it to go on and complete", res, err)
			}
			if _, err := os.Stat(filepath.Join(h.workspace, "late.txt")); err == nil {
				t.Fatal("late.txt exists: the command kept running")
			}
			var end agent.Event
			for _, e := range h.events() {
				if e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleToolResult {
					end = e
				}
			}
			if end.Message == nil || !end.Message.IsError {
				t.Fatalf("tool result event %+v, want an error result", end.Message)
			}
			text := end.Message.Text()
			if strings.Contains(text, "context canceled") || !strings.Contains(text, "may or may not have completed") {
				t.Fatalf("tool result %q, want the command's outcome unknown", text)
			}
			sess, err := h.store.Load("s1")
			if err != nil {
				t.Fatal(err)
			}
			if e, ok := sess.Get(end.EntryID); !ok || e.Message == nil || e.Message.Text() != text {
				t.Fatalf("session file result %+v, want %q", e.Message, text)
			}
		})
	}
}

// The one mapping (cutOf) for every way a call can end without its
// result, as the model reads it: for bash and for a read-only tool.
// Spec 13.4.7.
func TestPrompt_ToolCutResults(t *testing.T) {
	// A call that runs once is told what the workspace changed since the
	// turn's checkpoint (spec 20.3): here nothing.
	noChange := activities.EvidenceHead + activities.EvidenceNone
	for _, tc := range []struct {
		name, tool string
		err        error
		want       string
	}{
		{"bash lost", "bash", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil), fmt.Sprintf(ToolOutcomeUnknownMessage, "heartbeat") + noChange},
		{"bash stopped by a worker shutdown", "bash", temporal.NewApplicationError("worker stopped while bash ran: context canceled", activities.ErrTypeWorkerStopped), ToolInterruptedMessage + noChange},
		{"bash cut without an abort", "bash", temporal.NewApplicationError("bash was cut by its worker without an abort: deadline exceeded", activities.ErrTypeCallCut), ToolCutMessage + noChange},
		{"bash cut, reported by an older worker", "bash", errors.New("context canceled"), ToolCutMessage + noChange},
		{"bash failed", "bash", temporal.NewNonRetryableApplicationError("disk on fire", "Other", nil), fmt.Sprintf(ToolFailedMessage, "disk on fire")},
		{"read lost", "read", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil), fmt.Sprintf(ToolLostMessage, "heartbeat")},
		{"read stopped by a worker shutdown", "read", temporal.NewApplicationError("worker stopped while read ran: context canceled", activities.ErrTypeWorkerStopped), ToolCutOffMessage},
		{"read cut without an abort", "read", temporal.NewApplicationError("read was cut by its worker without an abort: deadline exceeded", activities.ErrTypeCallCut), ToolCutOffMessage},
		// Issue 41: an MCP server's tool runs at most once, as bash does.
		{"MCP tool lost", "mcp__fs__write_file", temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil), fmt.Sprintf(ToolOutcomeUnknownMessage, "heartbeat") + noChange},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.runTool = func(context.Context, activities.RunToolInput) (activities.RunToolResult, error) {
				return activities.RunToolResult{}, tc.err
			}
			args := `{"command":"true"}`
			if tc.tool != "bash" {
				args = `{"path":"a.txt"}`
			}
			in := h.toolInput(`tool:`+tc.tool+` `+args, `text:done`)
			in.Tools.Enabled = append(in.Tools.Enabled, "mcp__fs__*")
			res, err := h.run(in)
			if err != nil || res.Status != agent.StatusCompleted {
				t.Fatalf("prompt: %+v %v", res, err)
			}
			var got string
			for _, e := range h.events() {
				if e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleToolResult {
					got = e.Message.Text()
				}
			}
			if got != tc.want {
				t.Fatalf("tool result %q, want %q", got, tc.want)
			}
		})
	}
}

// Issue 20 item 5 for a command the user typed (RPC bash): the SDK
// cancels it without an abort (its heartbeat failed) and the server takes
// the failure. The run fails saying the command may or may not have
// completed, not "context canceled".
// Spec 13.4.7.
func TestBash_CutByTheSDKWithoutAnAbortIsAnUnknownOutcome(t *testing.T) {
	h := newHarness(t)
	h.env.RegisterWorkflowWithOptions(Bash, workflow.RegisterOptions{Name: BashWorkflowName})
	h.env.RegisterActivityWithOptions(func(ctx context.Context, in activities.UserBashInput) (activities.UserBashResult, error) {
		cctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		time.AfterFunc(300*time.Millisecond, func() { cancel(serviceerror.NewUnavailable("connection refused")) })
		return h.acts.UserBash(cctx, in)
	}, activity.RegisterOptions{Name: activities.UserBashName})
	h.env.ExecuteWorkflow(BashWorkflowName, BashInput{SessionID: "s1", Command: "sleep 30; echo late > late.txt", Workspace: h.workspace})
	if !h.env.IsWorkflowCompleted() {
		t.Fatal("workflow did not complete")
	}
	err := h.env.GetWorkflowError()
	if err == nil || strings.Contains(err.Error(), "context canceled") || !strings.Contains(err.Error(), "may or may not have completed") {
		t.Fatalf("bash run error %v, want the command's outcome unknown", err)
	}
	if _, err := os.Stat(filepath.Join(h.workspace, "late.txt")); err == nil {
		t.Fatal("late.txt exists: the command kept running")
	}
}
