package workflows

import (
	"cmp"
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/metrics"
	"github.com/durableagent/durableagent/retry"
)

// The Prompt loop as a step machine: execute runs one step after the
// other until a step ends the prompt. Each step is a method that returns
// the next; the state they share is the run.

// step is the next action of the loop.
type step int

const (
	stepModel    step = iota // call the model (a new turn, or a retry of it)
	stepTools                // run the tool calls of the last answer
	stepBoundary             // between turns: limits, compaction, continue-as-new
	stepDone                 // the prompt ended; r.endRes/r.endErr hold the outcome
)

// execute runs the loop as a small step machine.
func (r *run) execute(ctx workflow.Context) (PromptResult, error) {
	if err := r.begin(ctx); err != nil {
		return r.fail(ctx, err.Error())
	}
	r.startBudget(ctx)
	// The running prompts and sub-agents (metrics; no command).
	h := workflow.GetMetricsHandler(ctx)
	metrics.Enter(h, metrics.StateRunning)
	if r.in.Parent != nil {
		metrics.EnterSubAgent(h)
	}
	next := stepModel
	for next != stepDone {
		if r.aborted && next != stepTools {
			if r.agentRunning {
				r.closeAgent(ctx, false, agent.StopReasonAborted, "")
			}
			r.end(r.finishAborted(ctx))
			break
		}
		switch next {
		case stepModel:
			next = r.modelStep(ctx)
		case stepTools:
			next = r.toolStep(ctx)
		case stepBoundary:
			next = r.boundaryStep(ctx)
		}
	}
	metrics.Leave(h, metrics.StateRunning)
	if r.in.Parent != nil {
		metrics.LeaveSubAgent(h)
	}
	return r.endRes, r.endErr
}

// end records the prompt's outcome and stops the loop.
func (r *run) end(res PromptResult, err error) step {
	r.endRes, r.endErr = res, err
	return stepDone
}

// modelStep calls the model for the current turn and decides what comes
// next: the retry policy first (SPEC 1), then compaction for an overflow,
// then the tool calls of the answer, or the end of the prompt.
func (r *run) modelStep(ctx workflow.Context) step {
	if r.budgetReached() {
		// Before any model call: a session past its limit, or a prompt
		// whose overflow compaction spent the rest.
		return r.stopForBudget(ctx)
	}
	if err := r.deliverQueued(ctx); err != nil {
		return r.end(r.fail(ctx, err.Error()))
	}
	r.openTurn(ctx)
	r.checkpointAhead(ctx)
	res, view, err := r.callModel(ctx)
	if err != nil {
		return r.end(r.fail(ctx, err.Error()))
	}
	r.countUsage(ctx, cmp.Or(res.Billed, res.Usage), res.Billed == nil) // a paused turn's answers, all billed
	o := res.Outcome(res.StopReason)
	o.ContextWindow = r.in.Model.ContextWindow
	if res.Usage != nil {
		o.InputTokens, o.CacheReadTokens = res.Usage.Input, res.Usage.CacheRead
	}
	d := r.chain.Decide(o, r.classify(ctx, o), r.settings)
	// An overflow error goes to compaction; a successful answer that
	// reports a silent overflow is handled by the threshold check.
	overflow := d.Classification.Class == retry.ClassContextOverflow && res.StopReason == agent.StopReasonError
	// A failed attempt that reached the budget is not retried; an overflow
	// is followed by compact-and-continue unless it came right after an
	// overflow compaction.
	recoverable := r.in.Compaction.Enabled && r.in.Compaction.AutoContinue && !r.OverflowRecovered
	willRetry := (d.Retry || (overflow && recoverable)) && !r.budgetReached()
	// Tool calls are run whatever the stop reason of a complete answer
	// (a length stop may carry calls cut short: they get error results),
	// so no call is ever left without its result.
	// An abort that lands while such an answer completes still goes
	// through the tool step, which gives every call an aborted result
	// (providers refuse a session whose tool call has no result).
	hasTools := len(res.ToolCalls) > 0 &&
		res.StopReason != agent.StopReasonError && res.StopReason != agent.StopReasonAborted

	if hasTools {
		r.emitRetryEnd(ctx, d.End)
		r.advance(res.EntryID)
		r.batch, r.batchView = res, view
		r.lastUsage = res.Usage
		return stepTools
	}
	r.emit(ctx, agent.Event{Type: agent.EventTurnEnd, Turn: r.Turn, EntryID: res.EntryID, Message: view})
	answered := !d.Retry && !overflow && !r.aborted &&
		res.StopReason != agent.StopReasonAborted && res.StopReason != agent.StopReasonError
	if answered && r.queuedTurnDue(ctx) {
		// A steer or follow-up message waits: the agent run goes on with
		// it in a new turn instead of ending.
		r.emitRetryEnd(ctx, d.End)
		r.advance(res.EntryID)
		r.lastUsage = res.Usage
		r.answered = true
		return stepBoundary
	}
	r.closeAgent(ctx, willRetry, res.StopReason, res.ErrorMessage)
	r.emitRetryEnd(ctx, d.End)

	if d.Retry && r.budgetReached() && !r.aborted {
		// The chain ends here; it has an end event only if an
		// auto_retry_start was emitted (a retry waited before).
		if end := budgetEnd(r.chain.Cancel(), r.bud.reached); d.Start.Attempt > 1 {
			r.emitRetryEnd(ctx, end)
		}
		return r.stopForBudget(ctx)
	}
	if d.Retry {
		return r.retryAfterBackoff(ctx, &d, res)
	}
	switch {
	case res.StopReason == agent.StopReasonAborted || r.aborted:
		r.advance(res.EntryID)
		return r.end(r.finishAborted(ctx))
	case overflow && r.budgetReached():
		return r.stopForBudget(ctx)
	case overflow:
		// Never retried (SPEC 1): the compaction path decides.
		return r.checkCompaction(ctx, res)
	case res.StopReason == agent.StopReasonError:
		r.advance(res.EntryID)
		msg := res.ErrorMessage
		if d.End != nil && d.End.FinalError != "" {
			msg = d.End.FinalError
		}
		return r.end(r.fail(ctx, msg))
	}
	r.advance(res.EntryID)
	return r.completeTurn(ctx, res)
}

// boundaryStep runs between two turns of tool use: the turn limit, the
// compaction threshold (checked after every answer, so a long job runs
// past the context window), and continue-as-new for long histories.
func (r *run) boundaryStep(ctx workflow.Context) step {
	r.OverflowRecovered = false
	afterAnswer := r.answered
	r.answered = false
	if r.budgetReached() {
		// The tool calls of the last answer have their results: stop
		// before the next model call (and before a compaction's).
		return r.stopForBudget(ctx)
	}
	// agent.maxTurns stops a model that keeps calling tools; a turn that
	// answers a steer or follow-up message is the user's.
	if max := r.in.Agent.MaxTurns; max > 0 && r.Turn >= max && !afterAnswer && len(r.steering) == 0 {
		r.closeAgent(ctx, false, agent.StopReasonToolUse, "")
		return r.end(r.fail(ctx, fmt.Sprintf(MaxTurnsMessage, max)))
	}
	r.Turn++
	if r.thresholdReached(r.lastUsage) {
		if out := r.compact(ctx, CompactionReasonThreshold, true); out.aborted {
			r.closeAgent(ctx, false, agent.StopReasonAborted, "")
			return r.end(r.finishAborted(ctx))
		}
	}
	if r.shouldContinueAsNew(ctx) {
		return r.end(r.continueAsNew(ctx))
	}
	return stepModel
}

// MaxTurnsMessage fails a prompt stopped by agent.maxTurns.
const MaxTurnsMessage = "stopped after %d turns (agent.maxTurns): the model was still calling tools; " +
	"send a follow-up prompt to let it continue, or raise agent.maxTurns"
