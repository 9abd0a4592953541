package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
)

// Issue 12 (durable approval): a tool call waiting for approve_tool
// survives a restart of the Temporal server itself (the same SQLite
// file), and is decided afterwards by the plain update a user sends by
// hand — `temporal workflow update execute --workflow-id session-S
// --name approve_tool --input '{"toolCallId":...,"approved":true}'` makes
// this very UpdateWorkflow call, by name, with a JSON payload.
func TestIntegration_ApprovalSurvivesServerRestartAndIsDecidedByName(t *testing.T) {
	e := newEnv(t)
	e.s.Tools.RequireApproval = []string{"bash"}
	e.startWorker()
	ws := t.TempDir()
	in := client.PromptInput(e.s, "approve-restart", "make the marker")
	in.Workspace = ws
	in.Model.Faults = []string{`tool:bash {"command":"echo approved > marker.txt"}`, `text:marker made`}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	req := e.waitEvent("approve-restart", 30*time.Second, isType(agent.EventToolApprovalRequest))

	e.stopServer()
	e.startServer()
	e.startWorker()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := e.k.State(ctx, "approve-restart")
	if err != nil || len(st.PendingApprovals) != 1 || st.PendingApprovals[0].ToolCallID != req.ToolCallID {
		t.Fatalf("state after the server restart: %+v %v", st, err)
	}
	h, err := e.c.UpdateWorkflow(ctx, sdkclient.UpdateWorkflowOptions{
		WorkflowID: "session-approve-restart", UpdateName: "approve_tool",
		Args:         []any{map[string]any{"toolCallId": req.ToolCallID, "approved": true}},
		WaitForStage: sdkclient.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		t.Fatalf("approve_tool by name: %v", err)
	}
	if err := h.Get(ctx, nil); err != nil {
		t.Fatalf("approve_tool result: %v", err)
	}
	res, err := e.result(e.c.GetWorkflow(ctx, run.GetID(), ""))
	if err != nil || res.Status != agent.StatusCompleted || res.Text != "marker made" {
		t.Fatalf("result %+v %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "marker.txt")); string(b) != "approved\n" {
		t.Fatalf("marker.txt %q: the approved call did not run once", b)
	}
}
