package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/retry"
)

// Budgets (settings group budget): once a limit is reached the prompt
// stops where no work is cut in half, before the next model call or
// instead of a retry, with a final message that names the limit.

// budget is a run's budget state.
type budget struct {
	// on: the prompt has a budget (a limit set).
	on bool
	// spent is this prompt's usage (carried across continue-as-new);
	// before is the session's earlier prompts (BeginPrompt).
	spent, before agent.Spend
	// startedAt is when the prompt started (its first run).
	startedAt time.Time
	// reached names the limit reached ("": none yet).
	reached string
	// timeUp: maxDuration's timer fired; endsWait: so approval waits
	// end (approval.go). A token or cost limit lets a wait go on: the
	// step finishes, waiting costs nothing.
	timeUp, endsWait bool
}

// startBudget fixes the budget of a run: usage carried from the previous
// run, and the maxDuration timer, which marks the limit reached and ends
// a pending retry backoff or approval wait when it fires.
func (r *run) startBudget(ctx workflow.Context) {
	r.bud.spent.Unpriced = r.in.Model.Cost == nil
	r.bud.startedAt = workflow.Now(ctx).Truncate(time.Millisecond) // as carried (StartedMs)
	if c := r.in.Continued; c != nil {
		if c.Spent != nil {
			r.bud.spent = *c.Spent
		}
		if c.SessionSpent != nil {
			r.bud.before = *c.SessionSpent
		}
		if c.StartedMs > 0 {
			r.bud.startedAt = time.UnixMilli(c.StartedMs)
		}
	}
	lim := r.in.Budget
	if !lim.Any() {
		return
	}
	r.bud.on = true
	r.checkBudget() // a session already past its limit stops before any call
	if lim.MaxDurationMs <= 0 || r.bud.reached != "" {
		return
	}
	left := r.bud.startedAt.Add(time.Duration(lim.MaxDurationMs) * time.Millisecond).Sub(workflow.Now(ctx))
	if left <= 0 {
		r.bud.reached = r.durationReached(ctx)
		return
	}
	workflow.Go(ctx, func(ctx workflow.Context) {
		err := workflow.NewTimerWithOptions(ctx, left, workflow.TimerOptions{
			Summary: fmt.Sprintf("budget.maxDurationMs %d", lim.MaxDurationMs)}).Get(ctx, nil)
		if err != nil {
			return
		}
		r.bud.timeUp = true
		if r.bud.reached == "" {
			r.bud.reached = r.durationReached(ctx)
			r.abortRetry() // a retry backoff stops now; a model or tool call finishes
		}
		r.endApprovalWait() // so does a wait for approval, whatever limit came first
	})
}

func (r *run) durationReached(ctx workflow.Context) string {
	ran := workflow.Now(ctx).Sub(r.bud.startedAt).Round(time.Second)
	return fmt.Sprintf("budget.maxDurationMs %d reached: ran %s", r.in.Budget.MaxDurationMs, ran)
}

// countUsage counts a model attempt's usage (nil: it reported none);
// shown says its message_end carries it.
func (r *run) countUsage(ctx workflow.Context, u *agent.Usage, shown bool) {
	var s agent.Spend
	s.Add(u)
	r.countSpend(ctx, s, shown)
}

// countSpend adds s to the prompt's usage (the one figure its budget
// compares and its events show: a model or summary call's, a
// sub-agent's) and, for a prompt with a budget, checks the limits: a
// limit reached stops the prompt before its next model call. It emits
// usage_update, the figure so far, when the prompt has a budget or when
// s is not on an answer's message_end (shown): a client that adds the
// answers' usage to the latest usage_update shows the figure all along.
func (r *run) countSpend(ctx workflow.Context, s agent.Spend, shown bool) {
	r.bud.spent = r.bud.spent.Plus(s)
	if r.bud.on {
		r.checkBudget()
	} else if shown {
		return
	}
	spent := r.bud.spent
	r.emit(ctx, agent.Event{Type: agent.EventUsage, Usage: &spent, Budget: r.budgetState()})
}

// checkBudget marks the first token or cost limit the usage reached.
func (r *run) checkBudget() {
	if r.bud.reached != "" {
		return
	}
	lim, s := r.in.Budget, r.bud.spent
	all := r.bud.before.Plus(s)
	switch {
	case lim.MaxTokens > 0 && s.Tokens() >= lim.MaxTokens:
		r.bud.reached = fmt.Sprintf("budget.maxTokens %d reached: spent %d tokens (input+output)", lim.MaxTokens, s.Tokens())
	case lim.MaxCostUsd > 0 && s.CostUsd >= lim.MaxCostUsd:
		r.bud.reached = fmt.Sprintf("budget.maxCostUsd %s reached: spent %s", agent.FormatUsd(lim.MaxCostUsd), agent.FormatUsd(s.CostUsd))
	case lim.SessionMaxTokens > 0 && all.Tokens() >= lim.SessionMaxTokens:
		r.bud.reached = fmt.Sprintf("budget.session.maxTokens %d reached: the session spent %d tokens (input+output)", lim.SessionMaxTokens, all.Tokens())
	case lim.SessionMaxCostUsd > 0 && all.CostUsd >= lim.SessionMaxCostUsd:
		r.bud.reached = fmt.Sprintf("budget.session.maxCostUsd %s reached: the session spent %s", agent.FormatUsd(lim.SessionMaxCostUsd), agent.FormatUsd(all.CostUsd))
	}
}

// budgetReached reports whether the prompt must stop for its budget.
func (r *run) budgetReached() bool { return r.bud.on && r.bud.reached != "" }

// budgetState is the budget part of the state query and usage_update.
func (r *run) budgetState() *agent.Budget {
	if !r.bud.on {
		return nil
	}
	b := &agent.Budget{Limits: r.in.Budget, Reached: r.bud.reached}
	if ms := r.in.Budget.MaxDurationMs; ms > 0 {
		d := r.bud.startedAt.Add(time.Duration(ms) * time.Millisecond).UTC()
		b.Deadline = &d
	}
	if r.in.Budget.HasSession() {
		all := r.bud.before.Plus(r.bud.spent)
		b.SessionUsage = &all
	}
	return b
}

// BudgetStopMessage is the final assistant message of a prompt its budget
// stopped (%s names the limit and what was spent).
const BudgetStopMessage = "Stopped: %s. Raise the limit and send a follow-up prompt to continue."

// stopForBudget ends a prompt whose budget was reached: the final
// assistant message, agent_end, and a failed prompt_end that names the
// limit. The caller has finished the step it was in.
func (r *run) stopForBudget(ctx workflow.Context) step {
	if r.pendingUser != nil {
		// Stopped before its first model call (the session was past its
		// limit): the agent run and the user message, no turn.
		r.startAgent(ctx)
		r.emitPendingUser(ctx) // with the session settings note: the session's cap may be why it stops
	}
	msg := agent.TextMessage(agent.RoleAssistant, fmt.Sprintf(BudgetStopMessage, r.bud.reached))
	msg.Provider, msg.Model, msg.StopReason = r.in.Model.Provider, r.in.Model.Name, agent.StopReasonStop
	id := r.newID()
	r.emit(ctx, agent.Event{Type: agent.EventMessageStart, EntryID: id,
		Message: &agent.Message{Role: agent.RoleAssistant, Provider: msg.Provider, Model: msg.Model}})
	if _, err := r.record(ctx, id, r.LeafID, msg); err != nil {
		return r.end(r.fail(ctx, err.Error()))
	}
	r.advance(id)
	view := r.assistantView(activities.CallModelResult{EntryID: id, StopReason: agent.StopReasonStop, Text: msg.Text()})
	r.emit(ctx, agent.Event{Type: agent.EventMessageEnd, EntryID: id, Message: view})
	if r.agentRunning {
		r.closeAgent(ctx, false, agent.StopReasonStop, "")
	}
	return r.end(r.fail(ctx, r.bud.reached))
}

// budgetEnd is the auto_retry_end of a chain the budget ended: its final
// error names the limit.
func budgetEnd(end *retry.EndEvent, reached string) *retry.EndEvent {
	if end != nil {
		end.FinalError = reached
	}
	return end
}
