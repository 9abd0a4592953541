package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
)

// Issue 20 items 11 and 12 end to end: a worker with
// tools.workerRequireApproval=bash makes a prompt that asked for no
// approval wait for the approval of its bash call; a denial with a 100 KB
// reason (sent as starter approve and RPC send it) leaves no history event
// above a few KB, and the model reads the reason cut, with a note.
// Spec 15.2.1 and 15.2.2.
func TestIntegration_WorkerApprovalFloorAndBoundedDenyReason(t *testing.T) {
	e := newEnv(t)
	e.s.Tools.WorkerRequireApproval = []string{"bash"}
	e.startWorker()
	ws := t.TempDir()
	in := client.PromptInput(e.s, "floor", "clean up")
	in.Workspace = ws
	if len(in.Approval.RequireApproval) != 0 {
		t.Fatalf("the prompt asks for approval itself: %+v", in.Approval)
	}
	in.Model.Faults = []string{`tool:bash {"command":"echo gone > gone.txt"}`, `text:left it alone`}
	ctx := context.Background()
	run, err := e.k.StartPrompt(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	req := e.waitEvent("floor", 30*time.Second, isType(agent.EventToolApprovalRequest))
	if req.ToolName != "bash" {
		t.Fatalf("tool_approval_request %+v, want the bash call", req)
	}
	long := strings.Repeat("never delete files here; ", 4096) // 100 KB
	if err := e.k.ApproveTool(ctx, "floor", agent.ApproveToolPayload{ToolCallID: req.ToolCallID, Reason: long}); err != nil {
		t.Fatalf("deny: %v", err)
	}
	res, err := e.result(run)
	if err != nil || res.Status != agent.StatusCompleted || res.Text != "left it alone" {
		t.Fatalf("result %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "gone.txt")); err == nil {
		t.Fatal("the denied bash call ran")
	}

	iter := e.c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		// The result carries the prompt's last events page (spec
		// 13.11.8), the reason among them cut: bounded by a page, and
		// short of the 100 KB reason.
		limit := 16 << 10
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED {
			limit = min(agent.EventsPageBytes+16<<10, len(long)/2)
		}
		if n := proto.Size(ev); n > limit {
			t.Errorf("history event %d (%s) is %d bytes, want at most %d", ev.GetEventId(), ev.GetEventType(), n, limit)
		}
	}

	store, err := session.Open(filepath.Join(e.dataDir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	sess, err := store.Load("floor")
	if err != nil {
		t.Fatal(err)
	}
	var denial string
	for _, en := range sess.Branch(sess.LeafID()) {
		if m := en.Message; m != nil && m.Role == agent.RoleToolResult {
			denial = m.Text()
		}
	}
	if !strings.HasPrefix(denial, "Tool call denied by user: never delete files here; ") ||
		!strings.Contains(denial, "reason cut: it had 102400 bytes") || len(denial) > agent.MaxApprovalReasonBytes+100 {
		t.Fatalf("the model's tool result (%d bytes) %.200q…", len(denial), denial)
	}
}
