package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/metrics"
	toolpolicy "github.com/durableagent/durableagent/internal/policy"
)

// Results of tool calls that did not get their approval.
const (
	// ToolDeniedMessage is the result of a call approve_tool denied; the
	// reason, when given, follows after ": ".
	ToolDeniedMessage = "Tool call denied by user"
	// ToolApprovalTimeoutMessage is the result of a call not decided
	// within tools.approvalTimeoutMs (%s: the wait, e.g. 30m).
	ToolApprovalTimeoutMessage = "Tool call denied: no one approved it within %s (tools.approvalTimeoutMs)"
	// ToolBudgetStopMessage is the result of a call still waiting when
	// the prompt's budget was reached (%s names the limit).
	ToolBudgetStopMessage = "Tool call not run: %s while it waited for approval"
)

// ApproveToolResult is the result of the approve_tool update.
type ApproveToolResult struct {
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	Approved   bool   `json:"approved"`
	// Scope is agent.ApprovalScopeSession when the approval holds for
	// the session's later matching calls too.
	Scope string `json:"scope,omitempty"`
}

// Durable tool approval (docs/spec.md 15.2): a call the policy asks for
// waits on workflow state only (plus a durable timer for the timeout) for
// the approve_tool update, which history keeps across worker restarts.

// approval is one call waiting for its decision.
type approval struct {
	call      *toolCall
	decided   bool
	approved  bool
	reason    string
	expiresAt *time.Time
	// grant is what approving the call for the session allows (nil: it
	// cannot be, e.g. a chained bash command); session says it was.
	grant   *toolpolicy.Grant
	session bool
}

// joinApprovalFloor adds the worker's floor (tools.workerRequireApproval,
// which BeginPrompt's result records in history, so a replay decides the
// same) to the prompt's own list. The joined list is the prompt's from
// then on: a continued run carries it in its input.
func (r *run) joinApprovalFloor(floor []string) {
	for _, t := range floor {
		if !slices.Contains(r.in.Approval.RequireApproval, t) {
			r.in.Approval.RequireApproval = append(slices.Clip(r.in.Approval.RequireApproval), t)
		}
	}
}

// waiting are the calls of the group still waiting for their decision.
func (r *run) waiting() []*approval {
	return slices.DeleteFunc(slices.Clone(r.approvals), func(a *approval) bool { return a.decided })
}

// pendingApproval returns the undecided approval of id (nil when none).
func (r *run) pendingApproval(id string) *approval {
	w := r.waiting()
	if i := slices.IndexFunc(w, func(a *approval) bool { return a.call.ref.ID == id }); i >= 0 {
		return w[i]
	}
	return nil
}

// validateApproval rejects an approve_tool for a call that is not
// waiting, or with a reason longer than agent.MaxApprovalReasonBytes:
// rejected updates never reach history, so a reason stays bounded there.
// It only reads state.
func (r *run) validateApproval(p agent.ApproveToolPayload) error {
	if n := len(p.Reason); n > agent.MaxApprovalReasonBytes {
		return fmt.Errorf("approve_tool: reason is %d bytes, more than %d: shorten it (starter approve and RPC approve_tool cut it to fit)",
			n, agent.MaxApprovalReasonBytes)
	}
	return r.validateDecision(p)
}

// validateDecision rejects an approve_tool for a call that is not
// waiting, or with a scope the call cannot take: a scope other than ""
// and session, a session scope on a denial, or one for a call no grant
// can cover.
func (r *run) validateDecision(p agent.ApproveToolPayload) error {
	id := p.ToolCallID
	if strings.TrimSpace(id) == "" {
		return errors.New("approve_tool: toolCallId is empty")
	}
	if a := r.pendingApproval(id); a != nil {
		switch {
		case p.Scope == "":
		case p.Scope != agent.ApprovalScopeSession:
			return fmt.Errorf("approve_tool: scope is %q, want %q or nothing", p.Scope, agent.ApprovalScopeSession)
		case !p.Approved:
			return errors.New("approve_tool: scope session applies to an approval, not a denial")
		case a.grant == nil:
			return fmt.Errorf("approve_tool: tool call %s cannot be allowed for the session (a bash command that chains commands, or no policy rule asked for it): approve it without scope", id)
		}
		return nil
	}
	if outcome, ok := r.decided[id]; ok {
		return fmt.Errorf("approve_tool: tool call %s was already %s", id, outcome)
	}
	var waiting []string
	for _, a := range r.waiting() {
		waiting = append(waiting, a.call.ref.ID)
	}
	if len(waiting) == 0 {
		return fmt.Errorf("approve_tool: tool call %s is not waiting for approval (no call is)", id)
	}
	return fmt.Errorf("approve_tool: tool call %s is not waiting for approval (waiting: %s)", id, strings.Join(waiting, ", "))
}

// approveTool records the decision; the waiting tool step wakes up.
func (r *run) approveTool(ctx workflow.Context, p agent.ApproveToolPayload) (ApproveToolResult, error) {
	// The validator ran, but two updates for one id may be accepted in
	// the same workflow task before either handler runs. (A reason is
	// not checked again but cut: a history accepted before the bound
	// replays to the same decision.)
	if err := r.validateDecision(p); err != nil {
		return ApproveToolResult{}, err
	}
	a := r.pendingApproval(p.ToolCallID)
	a.decided, a.approved, a.reason = true, p.Approved, strings.TrimSpace(p.Bounded().Reason)
	a.session = p.Scope == agent.ApprovalScopeSession
	r.decided[p.ToolCallID] = map[bool]string{true: "approved", false: "denied"}[p.Approved]
	r.setApprovalDetails(ctx)
	return ApproveToolResult{ToolCallID: p.ToolCallID, ToolName: a.call.ref.Name, Approved: p.Approved, Scope: p.Scope}, nil
}

// awaitApprovals asks for the approval of the group's calls that need it
// and waits until each is decided, the timeout passes, a steer message is
// queued or the prompt is aborted. A denied or timed-out call gets its
// error text in c.denial; an approved one runs; the others are left to
// the caller (skipped for the steer message, or aborted).
func (r *run) awaitApprovals(ctx workflow.Context, group []*toolCall) {
	timeout := time.Duration(r.in.Approval.ApprovalTimeoutMs) * time.Millisecond // 0 or less: none
	now := workflow.Now(ctx)
	for _, c := range group {
		ask, grant := r.decide(ctx, c)
		if !ask {
			continue
		}
		a := &approval{call: c, grant: grant}
		if timeout > 0 {
			t := now.Add(timeout).UTC()
			a.expiresAt = &t
		}
		r.approvals = append(r.approvals, a)
		r.emit(ctx, agent.Event{Type: agent.EventToolApprovalRequest, ToolCallID: c.ref.ID,
			ToolName: c.ref.Name, Args: c.ref.ArgsPreview, Policy: c.policy, Why: c.why, SessionScope: sessionScope(grant)})
	}
	if len(r.approvals) == 0 {
		return
	}
	r.setApprovalDetails(ctx)
	if r.bud.timeUp {
		r.endApprovalWait() // maxDuration passed in an earlier group of this step
	}
	done := func() bool {
		return r.aborted || len(r.steering) > 0 || r.bud.endsWait || len(r.waiting()) == 0
	}
	metrics.Enter(workflow.GetMetricsHandler(ctx), metrics.StateWaitingApproval)
	ok, err := true, error(nil)
	if timeout > 0 {
		ok, err = workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{Timeout: timeout,
			TimerOptions: workflow.TimerOptions{Summary: fmt.Sprintf("approval timeout (%s)", agent.FormatDelay(r.in.Approval.ApprovalTimeoutMs))}}, done)
	} else {
		err = workflow.Await(ctx, done)
	}
	timedOut := err == nil && !ok
	metrics.Leave(workflow.GetMetricsHandler(ctx), metrics.StateWaitingApproval)
	if err != nil || ctx.Err() != nil { // the workflow itself was cancelled
		r.aborted = true
	}
	for _, a := range r.approvals {
		id := a.call.ref.ID
		switch {
		case a.decided && a.approved:
			if a.session && a.grant != nil {
				r.grantForSession(ctx, *a.grant)
			}
		case a.decided:
			a.call.denial = ToolDeniedMessage
			if a.reason != "" {
				a.call.denial += ": " + a.reason
			}
		case r.aborted:
			r.decided[id] = "aborted"
		case len(r.steering) > 0:
			r.decided[id] = "skipped for a steer message"
		case r.bud.endsWait:
			r.decided[id] = "stopped: the budget was reached"
			a.call.denial = fmt.Sprintf(ToolBudgetStopMessage, r.bud.reached)
		case timedOut:
			r.decided[id] = "denied: not approved in time"
			a.call.denial = fmt.Sprintf(ToolApprovalTimeoutMessage, approvalWait(r.in.Approval.ApprovalTimeoutMs))
		}
	}
	r.approvals = nil
	workflow.SetCurrentDetails(ctx, "")
}

// endApprovalWait ends a pending approval wait for the reached budget.
func (r *run) endApprovalWait() {
	if len(r.waiting()) > 0 {
		r.bud.endsWait = true
	}
}

// approvalWait says a wait of ms as a person would: 30m, 2h, 45s.
func approvalWait(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d >= time.Minute && d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return agent.FormatDelay(ms)
}

// setApprovalDetails shows the calls still waiting in the current details
// (Temporal UI, `temporal workflow metadata`).
func (r *run) setApprovalDetails(ctx workflow.Context) {
	var names []string
	for _, a := range r.waiting() {
		names = append(names, a.call.ref.Name+" "+a.call.ref.ID)
	}
	if len(names) == 0 {
		workflow.SetCurrentDetails(ctx, "")
		return
	}
	workflow.SetCurrentDetails(ctx, fmt.Sprintf("Waiting for approval of %s (turn %d): approve_tool {\"toolCallId\": ..., \"approved\": true|false}",
		strings.Join(names, ", "), r.Turn))
}

// pendingApprovals is the state query's list of calls waiting.
func (r *run) pendingApprovals() []agent.PendingApproval {
	var out []agent.PendingApproval
	for _, a := range r.waiting() {
		out = append(out, agent.PendingApproval{ToolCallID: a.call.ref.ID, ToolName: a.call.ref.Name, Args: a.call.ref.ArgsPreview,
			Why: a.call.why, SessionScope: sessionScope(a.grant), ExpiresAt: a.expiresAt})
	}
	return out
}
