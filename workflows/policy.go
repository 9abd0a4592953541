package workflows

import (
	"fmt"
	"slices"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	toolpolicy "github.com/durableagent/durableagent/internal/policy"
	"github.com/durableagent/durableagent/internal/tools"
)

// The approval policy (internal/policy; docs/spec.md 15.3) decides each
// tool call from the prompt's input, so a replay decides the same; a
// session grant is kept in the input and beside the session.

// ToolPolicyDeniedMessage is the result of a call the policy denies; %s
// names the rule.
const ToolPolicyDeniedMessage = "Tool call denied by the approval policy (%s)"

// policyState is the run's approval-policy state.
type policyState struct {
	compiled  *toolpolicy.Policy
	decisions []agent.ToolDecision
}

// policy is the prompt's compiled policy, compiled at the first tool
// step: its rules are final once begin joined the worker's floor and the
// session's settings to them.
func (r *run) policy(ctx workflow.Context) *toolpolicy.Policy {
	if a := r.in.Approval; r.pol.compiled == nil {
		p, err := toolpolicy.Compile(a.RequireApproval, a.Policy)
		if err != nil { // Validate parsed the rules: not reached
			workflow.GetLogger(ctx).Error("approval policy", "error", err)
			p, _ = toolpolicy.Compile(a.RequireApproval, nil)
		}
		r.pol.compiled = p
	}
	return r.pol.compiled
}

// decide applies the policy and the session's grants to c (a call of a
// tool the prompt has not enabled is left alone): it sets
// c.policy and c.why (left empty when no rule matched), gives a denied
// call its result, and returns whether the call asks for approval and
// the grant approving it for the session would give (nil: none).
func (r *run) decide(ctx workflow.Context, c *toolCall) (ask bool, grant *toolpolicy.Grant) {
	if !tools.Enabled(r.in.Tools.Enabled, c.ref.Name) {
		// Not a tool of this prompt: the call cannot run (its result says
		// so), so no person is asked and no rule is applied.
		return false, nil
	}
	pc := toolpolicy.Call{Tool: c.ref.Name, Workspace: r.Workspace, Cut: c.ref.PolicyArgCut}
	if c.spec.Command {
		pc.Command = c.ref.PolicyArg
	} else {
		pc.Path = c.ref.PolicyArg
	}
	d := r.policy(ctx).Decide(pc)
	if c.spec.Kind == tools.KindActivity {
		c.pathRules = r.policy(ctx).PathRules(pc, d)
	}
	action, why := d.Action, ""
	if d.Index >= 0 {
		why = d.Why()
	}
	if action == toolpolicy.Ask {
		for _, g := range r.in.Approval.Grants {
			if g.Covers(pc, d) {
				action, why = toolpolicy.Allow, g.String()
				break
			}
		}
	}
	if why != "" {
		c.policy, c.why = string(action), why
		r.pol.decisions = append(r.pol.decisions, agent.ToolDecision{ToolCallID: c.ref.ID,
			ToolName: c.ref.Name, Policy: c.policy, Why: why})
		if n := len(r.pol.decisions); n > agent.MaxToolDecisions {
			r.pol.decisions = slices.Delete(r.pol.decisions, 0, n-agent.MaxToolDecisions)
		}
	}
	switch action {
	case toolpolicy.Deny:
		c.denial = fmt.Sprintf(ToolPolicyDeniedMessage, why)
	case toolpolicy.Ask:
		if g, ok := toolpolicy.GrantFor(pc, d); ok {
			grant = &g
		}
		return true, grant
	}
	return false, nil
}

// sessionScope is what approving a call for the session allows
// (toolpolicy.Grant.Scope), for the approval request's event and state,
// so every client (CLI, TUI, RPC) shows the same words.
func sessionScope(g *toolpolicy.Grant) string {
	if g == nil {
		return "nothing: a command that chains commands is approved once only"
	}
	return g.Scope()
}

// addGrant adds g to the grants in force; false when it was there or
// the grants are full.
func (r *run) addGrant(g toolpolicy.Grant) bool {
	gs := r.in.Approval.Grants
	if slices.Contains(gs, g) || len(gs) >= activities.MaxSessionGrants {
		return false
	}
	r.in.Approval.Grants = append(slices.Clip(gs), g)
	return true
}

// grantForSession keeps the grant of an approval given with scope
// session: in the run's input (continue-as-new carries it) and beside
// the session, for its later prompts. A failure to keep it beside the
// session is logged: the grant still holds for this prompt.
func (r *run) grantForSession(ctx workflow.Context, g toolpolicy.Grant) {
	if !r.addGrant(g) {
		if len(r.in.Approval.Grants) >= activities.MaxSessionGrants {
			workflow.GetLogger(ctx).Warn("session grant not kept: the session has the most grants it may",
				"session", r.in.SessionID, "grant", g.String(), "max", activities.MaxSessionGrants)
		}
		return
	}
	err := workflow.ExecuteLocalActivity(localOptions(ctx), activities.RecordGrantName,
		activities.RecordGrantInput{SessionID: r.in.SessionID, Grant: g}).Get(ctx, nil)
	if err != nil {
		workflow.GetLogger(ctx).Warn("session grant not kept beside the session", "session", r.in.SessionID,
			"grant", g.String(), "error", rootMessage(err))
	}
}
