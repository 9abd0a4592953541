package workflows

import (
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
)

// Approval (issue 20 item 12): a deny reason enters history in the
// approve_tool update, so it is bounded like the texts history carries:
// the validator rejects a longer one (a rejected update never reaches
// history) and the call keeps waiting; the same reason cut as every client
// sends it (ApproveToolPayload.Bounded) is accepted, and the model reads
// the cut reason with a note saying it was cut.
// Spec 15.2.2.
func TestApproval_LongDenyReasonIsBounded(t *testing.T) {
	h := newHarness(t)
	long := strings.Repeat("do not touch production; ", 4096) // 100 KB
	var id string
	var raw, cut updateOutcome
	var between agent.State
	h.at(time.Minute, func() {
		if st := h.state(); len(st.PendingApprovals) == 1 {
			id = st.PendingApprovals[0].ToolCallID
			h.approveCall(id, "u1", false, long, &raw)
		}
	})
	h.at(2*time.Minute, func() {
		between = h.state()
		if id != "" {
			p := agent.ApproveToolPayload{ToolCallID: id, Approved: false, Reason: long}.Bounded()
			h.approveCall(p.ToolCallID, "u2", p.Approved, p.Reason, &cut)
		}
	})
	res, err := h.run(h.approvalInput(0, `tool:bash {"command":"echo hi > hi.txt"}`, `text:ok, I will not`))
	if err != nil || res.Text != "ok, I will not" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if raw.accepted || raw.rejected == nil || !strings.Contains(raw.rejected.Error(), "approve_tool: reason is 102400 bytes") ||
		strings.Contains(raw.rejected.Error(), "\n") {
		t.Fatalf("100 KB reason sent raw: %+v, want rejected in one line naming its size", raw)
	}
	if len(between.PendingApprovals) != 1 {
		t.Fatalf("after the rejected update the call must still wait: %+v", between.PendingApprovals)
	}
	if !cut.accepted || cut.failed != nil {
		t.Fatalf("the bounded reason: %+v, want accepted", cut)
	}
	if exists(h.workspace, "hi.txt") {
		t.Fatal("a denied call ran")
	}
	// What the model reads: the session's tool result.
	got := h.toolResultTexts(res.LeafID)
	if len(got) != 1 || !strings.HasPrefix(got[0], "!bash: Tool call denied by user: do not touch production; ") ||
		!strings.Contains(got[0], "reason cut") || !strings.Contains(got[0], "102400 bytes") ||
		len(got[0]) > agent.MaxApprovalReasonBytes+200 {
		t.Fatalf("tool result (%d bytes) %.300q…, want the reason cut to at most %d bytes with a note", len(got[0]), got[0], agent.MaxApprovalReasonBytes)
	}
	// What events (and the previews in history) carry.
	for _, e := range h.events() {
		size := 0
		if e.ToolResult != nil {
			for _, b := range e.ToolResult.Content {
				size += len(b.Text)
			}
		}
		if e.Message != nil {
			size += len(e.Message.Text())
		}
		if size > agent.MaxApprovalReasonBytes+200 {
			t.Errorf("event %s carries %d bytes of text", e.Type, size)
		}
	}
	if len(h.tools) != 0 || len(h.calls) != 2 {
		t.Fatalf("tool activities %d model calls %d, want 0 and 2", len(h.tools), len(h.calls))
	}
}

// Approval (issue 20 item 11): a worker's minimum approval list
// (tools.workerRequireApproval, ToolPolicy.RequireApproval) reaches the
// workflow in BeginPrompt's result, recorded in history, and joins the
// prompt's own list: a prompt that asked for no approval still waits for
// the approval of bash on this worker.
// Spec 15.2.1.
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
	if len(in.Approval.RequireApproval) != 0 {
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
// Spec 15.2.1.
func TestApproval_WorkerFloorCarriedAcrossContinueAsNew(t *testing.T) {
	h := newHarness(t)
	h.acts.ToolPolicy.RequireApproval = []string{"bash", "write"}
	in := h.toolInput(`tool:read {"path":"a.txt"}`, `text:done`)
	in.Approval.RequireApproval = []string{"edit", "bash"}
	in.Agent.ContinueAsNewEvents = 20
	h.env.SetCurrentHistoryLength(25)
	next := h.continued(in)
	if got := strings.Join(next.Approval.RequireApproval, ","); got != "edit,bash,write" {
		t.Fatalf("carried approval list %q, want edit,bash,write", got)
	}
}
