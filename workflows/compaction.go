package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/compaction"
	"github.com/durableagent/durableagent/internal/metrics"
	"github.com/durableagent/durableagent/retry"
)

// Reasons of auto_compaction_start.
const (
	CompactionReasonOverflow  = "overflow"
	CompactionReasonThreshold = "threshold"
)

// OverflowNotContinuedMessage fails a prompt whose overflow was recovered
// by compaction while compaction.autoContinue is false: the session is
// compacted, the turn is not run again.
const OverflowNotContinuedMessage = "context overflow: the session was compacted but compaction.autoContinue is false, " +
	"so the turn was not retried; send the prompt again to continue"

// checkCompaction is the overflow path of SPEC 1 and 9, reached only when
// no retry started for the turn: an overflow error is never retried; it is
// recovered by one compaction, then the turn runs again once (stepModel:
// the run context now starts with the summary), or the prompt ends.
func (r *run) checkCompaction(ctx workflow.Context, res activities.CallModelResult) step {
	stop := func(msg string) step {
		r.advance(res.EntryID) // the overflow error ends the conversation
		return r.end(r.fail(ctx, msg))
	}
	switch {
	case !r.in.Compaction.Enabled:
		return stop(compaction.OverflowCompactionDisabled)
	case r.OverflowRecovered:
		return stop(compaction.OverflowRecoveryFailed)
	}
	r.OverflowRecovered = true
	// The error leaves the run context by not advancing the leaf; the
	// session file keeps it. The compaction entry becomes its sibling.
	willRetry := r.in.Compaction.AutoContinue
	out := r.compact(ctx, CompactionReasonOverflow, willRetry)
	switch {
	case out.aborted:
		r.advance(res.EntryID)
		return r.end(r.finishAborted(ctx))
	case out.err != "" && out.cancelled:
		r.advance(res.EntryID)
		return r.end(r.failCancelled(ctx, "context overflow: compaction failed: "+out.err))
	case out.err != "":
		return stop("context overflow: compaction failed: " + out.err)
	case out.res.NothingToCompact:
		return stop(compaction.NothingToCompactMessageFor(out.res.MessageCount))
	case !willRetry:
		return r.end(r.fail(ctx, OverflowNotContinuedMessage))
	}
	return stepModel
}

// completeTurn ends a prompt whose turn produced its answer. Past the
// threshold of SPEC 9 it first compacts (willRetry false: the turn is
// finished, so nothing runs again), so the next prompt starts from a
// smaller context. A failed threshold compaction does not fail the prompt:
// the answer stands and the next prompt checks again. A steer or
// follow-up message that arrived meanwhile starts a new agent run
// instead: nothing queued is lost at the end.
func (r *run) completeTurn(ctx workflow.Context, res activities.CallModelResult) step {
	r.OverflowRecovered = false
	if r.thresholdReached(res.Usage) {
		if out := r.compact(ctx, CompactionReasonThreshold, false); out.aborted {
			return r.end(r.finishAborted(ctx))
		}
	}
	// No blocking call between this check and the end: a signal that
	// arrives later makes Temporal reject the completion and run the
	// workflow task again with it.
	if r.queuedTurnDue(ctx) {
		r.Turn++
		return stepModel
	}
	return r.end(r.complete(ctx, res.Text))
}

// thresholdReached applies compaction.ShouldCompact to the context size
// the provider reported for the answer (context tokens plus the answer's
// output, which is now part of the context).
func (r *run) thresholdReached(u *agent.Usage) bool {
	if !r.in.Compaction.Enabled || u == nil {
		return false
	}
	tokens := u.ContextTokens() + u.Output
	return compaction.ShouldCompact(tokens, r.in.Model.ContextWindow, r.in.Compaction.ReserveTokens)
}

// compactOutcome is how a compaction ended: with a result (which may say
// NothingToCompact), aborted, or failed with err.
type compactOutcome struct {
	res     activities.SummarizeResult
	aborted bool
	err     string
	// cancelled: abort_retry cancelled the summary's retry (err says so).
	cancelled bool
}

// compact runs one automatic compaction between auto_compaction_start and
// auto_compaction_end, with isCompacting set. On success the run context
// becomes the summary plus the kept messages: the compaction entry is the
// new leaf.
func (r *run) compact(ctx workflow.Context, reason string, willRetry bool) compactOutcome {
	r.emit(ctx, agent.Event{Type: agent.EventAutoCompactionStart, Reason: reason})
	out := r.summarize(ctx, "")
	end := agent.Event{Type: agent.EventAutoCompactionEnd}
	switch {
	case out.aborted:
		end.Aborted = true
	case out.err != "":
		end.ErrorMessage = out.err
	case out.res.NothingToCompact:
		if reason == CompactionReasonOverflow {
			end.ErrorMessage = compaction.NothingToCompactMessageFor(out.res.MessageCount)
		}
	default:
		r.LeafID, r.MessageCount = out.res.EntryID, out.res.MessageCount // the compaction entry ends the run context
		end.WillRetry = willRetry
		end.Result = compactionResult(out.res)
	}
	metrics.Compaction(workflow.GetMetricsHandler(ctx), reason, end)
	r.emit(ctx, end)
	return out
}

func compactionResult(res activities.SummarizeResult) *agent.CompactionResult {
	return &agent.CompactionResult{Summary: res.Summary, FirstKeptEntryID: res.FirstKeptEntryID,
		TokensBefore: res.TokensBefore, EntryID: res.EntryID}
}

// summarize runs the Summarize activity on the run context until it
// succeeds, says there is nothing to compact, fails for good or is
// aborted, retrying failed calls with the retry policy (its own chain).
// Only a Compact workflow tells those waits with auto_retry events (inside
// a prompt they belong to the turn's model calls), so its follower can
// abort_retry them.
func (r *run) summarize(ctx workflow.Context, custom string) compactOutcome {
	r.compacting = true
	workflow.SetCurrentDetails(ctx, "Compacting the context…")
	defer func() {
		r.compacting = false
		workflow.SetCurrentDetails(ctx, "")
	}()
	entryID := r.newID()
	var chain retry.Chain
	events := false // from the first failed attempt of a Compact workflow on
	// endChain emits auto_retry_end for the summary's chain when its
	// retries emit events; ended is the end of a chain the call ended.
	endChain := func(end *retry.EndEvent) {
		if events {
			r.emitRetryEnd(ctx, end)
		}
	}
	ended := func(stop agent.StopReason) *retry.EndEvent {
		return chain.Decide(retry.Outcome{StopReason: string(stop)}, retry.Classification{}, r.settings).End
	}
	for attempt := 0; ; attempt++ {
		if r.aborted {
			endChain(ended(agent.StopReasonAborted))
			return compactOutcome{aborted: true}
		}
		res, fatal := r.summarizeOnce(ctx, entryID, attempt, custom)
		if res.Usage != nil && !r.manualCompaction {
			r.countUsage(ctx, res.Usage, false) // a prompt's budget counts its summary calls
		}
		switch {
		case fatal != "":
			return compactOutcome{err: fatal}
		case res.StopReason != agent.StopReasonError && res.StopReason != agent.StopReasonAborted:
			// Done, even if an abort raced the end of the call: the
			// entry is written, so the run context must use it.
			endChain(ended(res.StopReason))
			return compactOutcome{res: res}
		case r.aborted:
			endChain(ended(agent.StopReasonAborted))
			return compactOutcome{aborted: true}
		}
		o := res.Outcome(res.StopReason)
		d := chain.Decide(o, r.classify(ctx, o), r.settings)
		events = r.manualCompaction
		if !d.Retry {
			endChain(d.End)
			msg := res.ErrorMessage
			if d.End != nil && d.End.FinalError != "" {
				msg = d.End.FinalError
			}
			return compactOutcome{err: "summary call failed: " + msg}
		}
		if events {
			r.emit(ctx, agent.Event{Type: agent.EventAutoRetryStart, Attempt: d.Start.Attempt,
				MaxAttempts: d.Start.MaxAttempts, DelayMs: d.Start.DelayMs, ErrorMessage: d.Start.ErrorMessage})
		}
		if r.waitBackoff(ctx, d.Start) {
			endChain(chain.Cancel())
			if r.aborted {
				return compactOutcome{aborted: true}
			}
			return compactOutcome{cancelled: true,
				err: fmt.Sprintf("%s (last summary error: %s)", retry.CancelledMessage, res.ErrorMessage)}
		}
		workflow.SetCurrentDetails(ctx, fmt.Sprintf("Compacting the context… (summary attempt %d)", attempt+2))
	}
}

// summarizeOnce runs one Summarize activity. Like a model call, it has a
// single Temporal attempt; a timeout (dead worker) becomes a retryable
// connection error, a cancellation an aborted result. fatal is set for
// failures no retry can fix (session store, bad input).
func (r *run) summarizeOnce(ctx workflow.Context, entryID string, attempt int, custom string) (res activities.SummarizeResult, fatal string) {
	cctx, cancel := workflow.WithCancel(ctx)
	r.cancelCall = cancel
	cctx = modelOptions(cctx, r.in, fmt.Sprintf("compaction summary %s (attempt %d)", entryID, attempt+1), r.modelQueue(ctx))
	err := workflow.ExecuteActivity(cctx, activities.SummarizeName, activities.SummarizeInput{
		SessionID: r.in.SessionID, LeafID: r.LeafID, EntryID: entryID, Model: r.in.Model,
		KeepRecentTokens: r.in.Compaction.KeepRecentTokens, CustomInstructions: custom, Attempt: attempt,
		FaultsAt: r.FaultsAt,
	}).Get(ctx, &res)
	r.cancelCall = nil
	cancel()
	if err == nil {
		return res, ""
	}
	stop, msg, fatal := r.modelFailure(ctx, err, "summary call")
	return activities.SummarizeResult{StopReason: stop, ModelError: activities.ModelError{ErrorMessage: msg}}, fatal
}
