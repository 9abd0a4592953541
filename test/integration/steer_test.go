package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/workflows"
)

// steerFixture is the history of a prompt with an approval (decided after
// a worker restart) and a steer during a tool batch
// (workflows/replay_test.go replays it).
var steerFixture = filepath.Join("..", "..", "workflows", "testdata", "prompt_steer_approval_history.json")

// Issue 12 end to end: a tool call waits for approval while its worker is
// replaced (the wait is workflow state: the new worker rebuilds it from
// history and answers state and approve_tool); a steer sent during a tool
// batch skips the call not started yet and the prompt goes on with it.
func TestIntegration_ApprovalSurvivesWorkerRestartAndSteerSkipsBatch(t *testing.T) {
	e := newEnv(t)
	e.s.Tools.RequireApproval = []string{"write"}
	e.startWorker()
	ws := t.TempDir()
	in := client.PromptInput(e.s, "steer", "write a note, then look around")
	in.Workspace = ws
	in.Model.Faults = []string{
		`tool:write {"path":"note.txt","content":"hi"}`,
		`tools:[{"name":"bash","arguments":{"command":"sleep 3; echo slow > slow.txt"}},{"name":"write","arguments":{"path":"never.txt","content":"x"}}]`,
		`text:steered`,
	}
	ctx := context.Background()
	run, err := e.k.StartPrompt(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	req := e.waitEvent("steer", 30*time.Second, isType(agent.EventToolApprovalRequest))
	if req.ToolName != "write" || req.ToolCallID == "" {
		t.Fatalf("tool_approval_request %+v", req)
	}

	// The worker goes away while the call waits; a new one takes over.
	e.stopWorker()
	e.startWorker()
	st, err := e.k.State(ctx, "steer")
	if err != nil || len(st.PendingApprovals) != 1 || st.PendingApprovals[0].ToolCallID != req.ToolCallID {
		t.Fatalf("state after the restart: %+v %v", st, err)
	}
	err = e.k.ApproveTool(ctx, "steer", agent.ApproveToolPayload{ToolCallID: "call_nope", Approved: true})
	if err == nil || !strings.Contains(err.Error(), "is not waiting for approval") {
		t.Fatalf("approve of an unknown id: %v", err)
	}
	if err := e.k.ApproveTool(ctx, "steer", agent.ApproveToolPayload{ToolCallID: req.ToolCallID, Approved: true}); err != nil {
		t.Fatalf("approve: %v", err)
	}
	err = e.k.ApproveTool(ctx, "steer", agent.ApproveToolPayload{ToolCallID: req.ToolCallID, Approved: false})
	if err == nil || !strings.Contains(err.Error(), "already") {
		t.Fatalf("second decision of %s: %v", req.ToolCallID, err)
	}

	// The second answer's bash runs; a steer now skips the write after it.
	e.waitEvent("steer", 30*time.Second, func(ev agent.Event) bool {
		return ev.Type == agent.EventToolExecutionStart && ev.ToolName == "bash"
	})
	if err := e.k.Steer(ctx, "steer", "stop after the slow command"); err != nil {
		t.Fatalf("steer: %v", err)
	}
	res, err := e.result(run)
	if err != nil || res.Status != agent.StatusCompleted || res.Text != "steered" {
		t.Fatalf("result %+v %v", res, err)
	}
	for name, want := range map[string]bool{"note.txt": true, "slow.txt": true, "never.txt": false} {
		if _, err := os.Stat(filepath.Join(ws, name)); (err == nil) != want {
			t.Errorf("%s exists: %t, want %t", name, err == nil, want)
		}
	}
	var skipped, steered bool
	for _, ev := range e.events("steer") {
		if ev.Type == agent.EventToolExecutionEnd && ev.ToolName == "write" && ev.IsError && ev.ToolResult != nil &&
			ev.ToolResult.Content[0].Text == workflows.SkippedForSteerMessage {
			skipped = true
		}
		if ev.Type == agent.EventMessageEnd && ev.Message != nil && ev.Message.Role == agent.RoleUser &&
			ev.Message.Text() == "stop after the slow command" {
			steered = true
		}
	}
	if !skipped || !steered {
		t.Fatalf("skipped write %t, steering message delivered %t", skipped, steered)
	}
	exportAndReplay(t, e, run.GetID(), run.GetRunID(), steerFixture)
}

// Issue 14 end to end: an aborted prompt closes as Canceled on the real
// server (not Failed), and control.Result still returns the aborted
// result.
func TestIntegration_AbortedPromptClosesAsCanceled(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	run := e.prompt("cancel", "hang")
	e.waitEvent("cancel", 30*time.Second, func(ev agent.Event) bool {
		return ev.Type == agent.EventMessageStart && ev.Message != nil && ev.Message.Role == agent.RoleAssistant
	})
	if err := e.k.Abort(context.Background(), "cancel"); err != nil {
		t.Fatal(err)
	}
	res, err := e.result(run)
	if err == nil || res.Status != agent.StatusAborted {
		t.Fatalf("result %+v %v, want aborted", res, err)
	}
	d, err := e.c.DescribeWorkflowExecution(context.Background(), run.GetID(), run.GetRunID())
	if err != nil {
		t.Fatal(err)
	}
	if s := d.GetWorkflowExecutionInfo().GetStatus(); s != enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED {
		t.Fatalf("closed as %s, want Canceled", s)
	}
}
