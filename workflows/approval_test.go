package workflows

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/agent"
)

// Approval (issue 20 item 11): a worker's minimum approval list
// (tools.workerRequireApproval, ToolPolicy.RequireApproval) reaches the
// workflow in BeginPrompt's result, recorded in history, and joins the
// prompt's own list: a prompt that asked for no approval still waits for
// the approval of bash on this worker.
func TestApproval_WorkerFloorApplies(t *testing.T) {
	h := newHarness(t)
	h.acts.ToolPolicy.RequireApproval = []string{"bash"}
	var during agent.State
	var out updateOutcome
	h.at(time.Hour, func() {
		during = h.state()
		if len(during.PendingApprovals) == 1 {
			h.approveCall(during.PendingApprovals[0].ToolCallID, "u1", true, "", &out)
		}
	})
	in := h.toolInput(`tool:read {"path":"a.txt"}`, `tool:bash {"command":"echo hi > hi.txt"}`, `text:done`)
	if len(in.Approval.Require) != 0 {
		t.Fatalf("the prompt asks for approval itself: %+v", in.Approval)
	}
	res, err := h.run(in)
	if err != nil || res.Text != "done" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if len(during.PendingApprovals) != 1 || during.PendingApprovals[0].ToolName != "bash" {
		t.Fatalf("pending approvals after an hour %+v, want the bash call waiting", during.PendingApprovals)
	}
	if !out.accepted || out.failed != nil {
		t.Fatalf("update %+v", out)
	}
	evs := h.events()
	if n := countType(evs, agent.EventToolApprovalRequest); n != 1 {
		t.Fatalf("%d tool_approval_request events, want 1 (bash only; read is not on the floor)", n)
	}
	var bashStart agent.Event
	for _, e := range evs {
		if e.Type == agent.EventToolExecutionStart && e.ToolName == "bash" {
			bashStart = e
		}
	}
	req, _ := findEvent(evs, agent.EventToolApprovalRequest)
	if bashStart.Time.Sub(req.Time) < time.Hour {
		t.Fatalf("bash started at %v, asked at %v: it must wait for the decision", bashStart.Time, req.Time)
	}
	if !exists(h.workspace, "hi.txt") {
		t.Fatal("the approved call did not run")
	}
}

// Approval: the worker's floor, joined to the prompt's list at its start,
// is carried into the next run of a prompt that continues as new (the
// next run does not call BeginPrompt again).
func TestApproval_WorkerFloorCarriedAcrossContinueAsNew(t *testing.T) {
	h := newHarness(t)
	h.acts.ToolPolicy.RequireApproval = []string{"bash", "write"}
	in := h.toolInput(`tool:read {"path":"a.txt"}`, `text:done`)
	in.Approval.Require = []string{"edit", "bash"}
	in.Agent.ContinueAsNewEvents = 20
	h.env.SetCurrentHistoryLength(25)
	h.env.ExecuteWorkflow(PromptWorkflowName, in)
	var can *workflow.ContinueAsNewError
	if err := h.env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("first run ended with %v, want continue-as-new", err)
	}
	var next PromptInput
	if err := decodePayload(can, &next); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(next.Approval.Require, ","); got != "edit,bash,write" {
		t.Fatalf("carried approval list %q, want edit,bash,write", got)
	}
}
