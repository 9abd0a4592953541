package workflows

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/durableagent/durableagent/agent"
	toolpolicy "github.com/durableagent/durableagent/internal/policy"
	"github.com/durableagent/durableagent/internal/settings"
)

// policyInput is a tool prompt decided by rules followed by the default
// policy, as client.PromptInput sends it.
func (h *harness) policyInput(rules []string, timeoutMs int64, script ...string) PromptInput {
	in := h.toolInput(script...)
	in.Approval = ToolApproval{Approval: agent.Approval{Policy: append(rules, toolpolicy.Default...), ApprovalTimeoutMs: timeoutMs}}
	return in
}

func (h *harness) approveScoped(id, updateID, scope string, approved bool, out *updateOutcome) {
	h.env.UpdateWorkflow(agent.UpdateApproveTool, updateID, &testsuite.TestUpdateCallback{
		OnAccept:   func() { out.accepted = true },
		OnReject:   func(err error) { out.rejected = err },
		OnComplete: func(_ any, err error) { out.failed = err },
	}, agent.ApproveToolPayload{ToolCallID: id, Approved: approved, Scope: scope})
}

func toolEnd(t *testing.T, evs []agent.Event, tool string) agent.Event {
	t.Helper()
	for _, e := range evs {
		if e.Type == agent.EventToolExecutionEnd && e.ToolName == tool {
			return e
		}
	}
	t.Fatalf("no tool_execution_end of %s", tool)
	return agent.Event{}
}

// Policy (issue 22): under the default policy bash and a write inside
// the workspace run at once, nobody asked; tool_execution_end and state
// say which rule allowed each.
func TestPolicy_DefaultAllowsBashAndWorkspaceWrites(t *testing.T) {
	h := newHarness(t)
	res, err := h.run(h.policyInput(nil, 0, `tool:bash {"command":"echo hi > hi.txt"}`,
		`tool:write {"path":"w.txt","content":"x"}`, `text:done`))
	if err != nil || res.Text != "done" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if !exists(h.workspace, "hi.txt") || !exists(h.workspace, "w.txt") {
		t.Fatal("an allowed call did not run")
	}
	evs := h.events()
	if n := countType(evs, agent.EventToolApprovalRequest); n != 0 {
		t.Fatalf("%d approval requests, want none", n)
	}
	if e := toolEnd(t, evs, "bash"); e.Policy != "allow" || e.Why != `rule 5 "allow bash"` {
		t.Fatalf("bash end: policy %q why %q", e.Policy, e.Why)
	}
	if e := toolEnd(t, evs, "write"); e.Policy != "allow" || e.Why != `rule 6 "allow write path:**"` {
		t.Fatalf("write end: policy %q why %q", e.Policy, e.Why)
	}
	b, _ := json.Marshal(toolEnd(t, evs, "write"))
	if !strings.Contains(string(b), `"policy":"allow","why":"rule 6 \"allow write path:**\""`) {
		t.Fatalf("tool_execution_end JSON %s lacks policy and why", b)
	}
	st := h.state()
	if len(st.ToolDecisions) != 2 || st.ToolDecisions[1].ToolName != "write" || st.ToolDecisions[1].Why != `rule 6 "allow write path:**"` {
		t.Fatalf("state toolDecisions %+v", st.ToolDecisions)
	}
}

// Policy: a denied call never runs; the model reads a result that names
// the rule, and the event and state say deny.
func TestPolicy_DenyDoesNotRun(t *testing.T) {
	h := newHarness(t)
	if err := os.WriteFile(filepath.Join(h.workspace, "keep.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := h.run(h.policyInput([]string{"deny bash prefix:rm "}, 0,
		`tool:bash {"command":"rm -f keep.txt"}`, `text:could not`))
	if err != nil || res.Text != "could not" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if !exists(h.workspace, "keep.txt") || len(h.tools) != 0 {
		t.Fatalf("the denied call ran (%d tool activities)", len(h.tools))
	}
	want := `!bash: Tool call denied by the approval policy (rule 1 "deny bash prefix:rm ")`
	if got := h.toolResultTexts(res.LeafID); len(got) != 1 || got[0] != want {
		t.Fatalf("tool results %q, want %q", got, want)
	}
	evs := h.events()
	if e := toolEnd(t, evs, "bash"); e.Policy != "deny" || !e.IsError || e.Why != `rule 1 "deny bash prefix:rm "` {
		t.Fatalf("bash end %+v", e)
	}
	if st := h.state(); len(st.ToolDecisions) != 1 || st.ToolDecisions[0].Policy != "deny" {
		t.Fatalf("state toolDecisions %+v", st.ToolDecisions)
	}
}

// Policy: an asked call waits (an hour of virtual time), its request and
// pending approval name the rule; approved with scope session it runs,
// and a later call of the same program under the same rule runs without
// asking, while another program still asks. The grant is kept beside
// the session for its later prompts.
func TestPolicy_AskThenAllowForSession(t *testing.T) {
	h := newHarness(t)
	rules := []string{"ask bash prefix:touch", "ask bash prefix:mkdir"}
	var during agent.State
	var first, second updateOutcome
	h.at(time.Hour, func() {
		during = h.state()
		if len(during.PendingApprovals) == 1 {
			h.approveScoped(during.PendingApprovals[0].ToolCallID, "u1", agent.ApprovalScopeSession, true, &first)
		}
	})
	h.at(2*time.Hour, func() {
		if st := h.state(); len(st.PendingApprovals) == 1 {
			h.approveScoped(st.PendingApprovals[0].ToolCallID, "u2", "", true, &second)
		}
	})
	res, err := h.run(h.policyInput(rules, 0, `tool:bash {"command":"touch a.txt"}`,
		`tool:bash {"command":"touch b.txt"}`, `tool:bash {"command":"mkdir d"}`, `text:done`))
	if err != nil || res.Text != "done" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if len(during.PendingApprovals) != 1 || during.PendingApprovals[0].Why != `rule 1 "ask bash prefix:touch"` {
		t.Fatalf("pending approvals %+v", during.PendingApprovals)
	}
	if !first.accepted || first.failed != nil || !second.accepted || second.failed != nil {
		t.Fatalf("updates %+v %+v", first, second)
	}
	for _, f := range []string{"a.txt", "b.txt", "d"} {
		if !exists(h.workspace, f) {
			t.Fatalf("%s not made", f)
		}
	}
	evs := h.events()
	var asked []string
	for _, e := range evs {
		if e.Type == agent.EventToolApprovalRequest {
			asked = append(asked, e.Why)
		}
	}
	if strings.Join(asked, "|") != `rule 1 "ask bash prefix:touch"|rule 2 "ask bash prefix:mkdir"` {
		t.Fatalf("asked %q: touch b.txt must run on the session grant, mkdir must ask", asked)
	}
	var whys []string
	for _, e := range evs {
		if e.Type == agent.EventToolExecutionEnd {
			whys = append(whys, e.Policy+": "+e.Why)
		}
	}
	if len(whys) != 3 || whys[1] != `allow: allowed for this session (bash touch … under ask bash prefix:touch)` {
		t.Fatalf("tool ends %q", whys)
	}
	b, err := h.store.Aside("s1", "approval-grants")
	if err != nil || !strings.Contains(string(b), `"program":"touch"`) || strings.Contains(string(b), "mkdir") {
		t.Fatalf("grants beside the session %s, %v", b, err)
	}
}

// Policy: an asked call nobody decides is denied when
// tools.approvalTimeoutMs passes on the durable timer (virtual time); the
// model reads why.
func TestPolicy_AskTimesOut(t *testing.T) {
	h := newHarness(t)
	var during agent.State
	h.whenState(approvalPending, func() { during = h.state() })
	res, err := h.run(h.policyInput([]string{"ask write path:*.conf"}, 30000,
		`tool:write {"path":"app.conf","content":"x"}`, `text:gave up`))
	if err != nil || res.Text != "gave up" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if got := h.toolResultTexts(res.LeafID); len(got) != 1 || got[0] != "!write: Tool call denied: no one approved it within 30s (tools.approvalTimeoutMs)" {
		t.Fatalf("tool results %q", got)
	}
	if len(during.PendingApprovals) != 1 || during.PendingApprovals[0].ExpiresAt == nil ||
		during.PendingApprovals[0].Why != `rule 1 "ask write path:*.conf"` {
		t.Fatalf("pending approvals %+v", during.PendingApprovals)
	}
	evs := h.events()
	req, _ := findEvent(evs, agent.EventToolApprovalRequest)
	end := toolEnd(t, evs, "write")
	if d := end.Time.Sub(req.Time); d < 30*time.Second || d > 31*time.Second {
		t.Fatalf("denied after %v, want 30s", d)
	}
	if exists(h.workspace, "app.conf") {
		t.Fatal("the call ran")
	}
}

// Policy: approve_tool's validator refuses a scope other than session, a
// session scope on a denial and one on a chained command, in one line;
// the call keeps waiting and a plain approval then runs it.
func TestPolicy_ScopeValidation(t *testing.T) {
	h := newHarness(t)
	var bad, deny, chained, plain updateOutcome
	h.at(time.Minute, func() {
		st := h.state()
		if len(st.PendingApprovals) != 1 {
			return
		}
		id := st.PendingApprovals[0].ToolCallID
		h.approveScoped(id, "u1", "forever", true, &bad)
		h.approveScoped(id, "u2", agent.ApprovalScopeSession, false, &deny)
		h.approveScoped(id, "u3", agent.ApprovalScopeSession, true, &chained)
	})
	h.at(2*time.Minute, func() {
		if st := h.state(); len(st.PendingApprovals) == 1 {
			h.approveScoped(st.PendingApprovals[0].ToolCallID, "u4", "", true, &plain)
		}
	})
	res, err := h.run(h.policyInput([]string{"ask bash"}, 0, `tool:bash {"command":"touch a && touch b"}`, `text:done`))
	if err != nil || res.Text != "done" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	for name, tc := range map[string]struct {
		out  updateOutcome
		want string
	}{
		"bad scope": {bad, `approve_tool: scope is "forever", want "session" or nothing`},
		"deny":      {deny, "scope session applies to an approval, not a denial"},
		"chained":   {chained, "cannot be allowed for the session"},
	} {
		if tc.out.accepted || tc.out.rejected == nil || !strings.Contains(tc.out.rejected.Error(), tc.want) {
			t.Errorf("%s: %+v, want rejected with %q", name, tc.out, tc.want)
		}
	}
	if !plain.accepted || !exists(h.workspace, "b") {
		t.Fatalf("plain approval %+v, b made %t", plain, exists(h.workspace, "b"))
	}
}

// Policy: a bad rule in the input fails the prompt at once, naming it.
func TestPolicy_BadRuleIsBadInput(t *testing.T) {
	h := newHarness(t)
	_, err := h.run(h.policyInput([]string{"allow bash regex:("}, 0, `text:x`))
	if err == nil || !strings.Contains(err.Error(), `tools.policy rule 1 "allow bash regex:(": bad regex`) {
		t.Fatalf("error %v", err)
	}
}

// Policy: a grant given in a run is carried into the next run of a
// prompt that continues as new (the next run does not call BeginPrompt).
func TestPolicy_GrantCarriedAcrossContinueAsNew(t *testing.T) {
	h := newHarness(t)
	var out updateOutcome
	h.at(time.Hour, func() {
		if st := h.state(); len(st.PendingApprovals) == 1 {
			h.approveScoped(st.PendingApprovals[0].ToolCallID, "u1", agent.ApprovalScopeSession, true, &out)
		}
	})
	in := h.policyInput([]string{"ask bash"}, 0, `tool:bash {"command":"touch a.txt"}`, `tool:bash {"command":"touch b.txt"}`, `text:done`)
	in.Agent.ContinueAsNewEvents = 20
	h.env.SetCurrentHistoryLength(25)
	next := h.continued(in)
	want := toolpolicy.Grant{Tool: "bash", Rule: "ask bash", Program: "touch"}
	if !out.accepted || len(next.Approval.Grants) != 1 || next.Approval.Grants[0] != want {
		t.Fatalf("update %+v; carried grants %+v, want %+v", out, next.Approval.Grants, want)
	}
}

// Policy (issue 22): a call of a tool the prompt has not enabled (a model
// naming a tool it was never given) cannot run, so the default policy's
// "ask *" does not make it wait for a person: it gets its "not enabled"
// result at once, and no approval is asked.
func TestPolicy_CallOfAToolNotEnabledIsNotAsked(t *testing.T) {
	h := newHarness(t)
	res, err := h.run(h.policyInput(nil, 0, `tool:json {"elements":[]}`, `text:moved on`))
	if err != nil || res.Text != "moved on" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if _, ok := findEvent(h.events(), agent.EventToolApprovalRequest); ok {
		t.Fatal("a call of a tool that cannot run asked for approval")
	}
	if got := h.toolResultTexts(res.LeafID); len(got) != 1 || !strings.Contains(got[0], "not enabled") {
		t.Fatalf("tool results %q, want the not-enabled error", got)
	}
}

// Policy (issue 22): with the settings' defaults, a call the default
// policy's "ask *" catches (a write outside the workspace) in a job
// nobody watches is denied after 30 minutes of virtual time, and the
// model reads why; it never waits for ever.
func TestPolicy_DefaultSettingsEndAnUnattendedAsk(t *testing.T) {
	h := newHarness(t)
	d := settings.Defaults()
	outside := filepath.Join(t.TempDir(), "app.conf")
	in := h.toolInput(`tool:write {"path":"`+outside+`","content":"x"}`, `text:gave up`)
	in.Approval = ToolApproval{Approval: d.Tools.Approval}
	in.Approval.Policy = append(d.Tools.Policy, toolpolicy.Default...)
	var during agent.State
	h.at(time.Minute, func() { during = h.state() })
	res, err := h.run(in)
	if err != nil || res.Text != "gave up" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	want := "!write: Tool call denied: no one approved it within 30m (tools.approvalTimeoutMs)"
	if got := h.toolResultTexts(res.LeafID); len(got) != 1 || got[0] != want {
		t.Fatalf("tool results %q, want %q", got, want)
	}
	if len(during.PendingApprovals) != 1 || during.PendingApprovals[0].Why != `rule 9 "ask *"` {
		t.Fatalf("pending approvals %+v, want the write asked by the default policy", during.PendingApprovals)
	}
	evs := h.events()
	req, _ := findEvent(evs, agent.EventToolApprovalRequest)
	if d := toolEnd(t, evs, "write").Time.Sub(req.Time); d < 30*time.Minute || d > 30*time.Minute+time.Second {
		t.Fatalf("denied after %v, want 30m", d)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Fatalf("the call ran: %v", err)
	}
}
