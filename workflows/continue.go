package workflows

import (
	"cmp"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
)

// shouldContinueAsNew reports whether this run's history is long enough
// to move on to a new run at this turn boundary: Temporal suggests it, or
// the history reached agent.continueAsNewEvents.
func (r *run) shouldContinueAsNew(ctx workflow.Context) bool {
	if r.aborted || len(r.approvals) > 0 {
		return false
	}
	info := workflow.GetInfo(ctx)
	limit := cmp.Or(r.in.Agent.ContinueAsNewEvents, DefaultContinueAsNewEvents) // Validate refuses < 0
	return info.GetContinueAsNewSuggested() || info.GetCurrentHistoryLength() >= limit
}

// continueAsNew ends this run and starts the next one of the same prompt,
// carrying the state the loop needs (Carry; docs/spec.md 13.9). Signals
// that arrived but were not handled yet are applied first, so none is lost.
func (r *run) continueAsNew(ctx workflow.Context) (PromptResult, error) {
	r.drainSignals(ctx)
	if r.aborted {
		r.closeAgent(ctx, false, agent.StopReasonAborted, "")
		return r.finishAborted(ctx)
	}
	r.closeCheckpoint(ctx)
	next := r.in
	next.Images = nil // in the session already: not copied into every run's history
	// The message too: a continued run starts from the carried state and
	// never reads it, so only its start (for people reading the history)
	// goes into the next run's input. Its history stays bounded whatever
	// the message, and the message and the carried queues never add up
	// past Temporal's payload limit. Replay-safe: a continue-as-new
	// command is matched by its type, not its input.
	next.Message = line.Cut(r.in.Message, continuedMessageRunes)
	prev := 0
	if r.in.Continued != nil {
		prev = r.in.Continued.Runs
	}
	spent, before := r.bud.spent, r.bud.before
	next.Continued = &Carry{loop: r.loop, Seq: r.seq, AutoRetry: r.settings.Enabled, Runs: prev + 1,
		Queue: r.queued(), QueueSeq: r.queueSeq,
		Spent: &spent, SessionSpent: &before, StartedMs: r.bud.startedAt.UnixMilli()}
	workflow.GetLogger(ctx).Info("prompt continues as new", "session", r.in.SessionID,
		"historyLength", workflow.GetInfo(ctx).GetCurrentHistoryLength(), "seq", r.seq, "turn", r.Turn)
	return PromptResult{}, workflow.NewContinueAsNewError(ctx, PromptWorkflowName, next)
}

// continuedMessageRunes is how much of the prompt's message a continued
// run's input keeps.
const continuedMessageRunes = 200
