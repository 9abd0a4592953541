package workflows

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/retry"
)

// ConnectionLostMessage is the assistant error the workflow records when a
// model call's activity times out (the worker died or lost Temporal). It
// contains "connection error" so the retry policy treats it like any
// network failure (SPEC 7).
const ConnectionLostMessage = "connection error: model call did not finish (%s timeout; the worker may have died)"

// Prompt runs one prompt of a session: it appends the user message, calls
// the model, and applies the retry policy at every agent_end until the
// turn completes, fails or is aborted. It returns only after any retry
// chain it started has ended (SPEC 6).
func Prompt(ctx workflow.Context, in PromptInput) (PromptResult, error) {
	if err := in.Validate(); err != nil {
		return PromptResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
	}
	r := newRun(ctx, in)
	r.idPrefix = entryIDPrefix(ctx)
	if err := r.registerHandlers(ctx); err != nil {
		return PromptResult{}, err
	}
	r.startSignalPump(ctx)
	return r.execute(ctx)
}

func (r *run) storeOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		// Session writes take milliseconds; a short timeout bounds what
		// a worker killed mid-write costs before another one re-runs it.
		StartToCloseTimeout: 10 * time.Second,
		// Session writes are idempotent, so Temporal may retry them;
		// permanent failures (read-only or full disk) are non-retryable.
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    500 * time.Millisecond,
			BackoffCoefficient: 2,
			MaximumAttempts:    5,
		},
	})
}

func (r *run) execute(ctx workflow.Context) (PromptResult, error) {
	var loaded activities.LoadSessionResult
	err := workflow.ExecuteActivity(r.storeOptions(ctx), activities.LoadSessionName,
		activities.LoadSessionInput{SessionID: r.in.SessionID}).Get(ctx, &loaded)
	if err != nil {
		return r.fail(ctx, fmt.Sprintf("load session %s: %s", r.in.SessionID, rootMessage(err)))
	}
	r.leafID, r.messageCount = loaded.LeafID, loaded.MessageCount

	user := agent.TextMessage(agent.RoleUser, r.in.Message)
	user.Timestamp = workflow.Now(ctx).UnixMilli()
	userEntry := session.Entry{
		Type: session.TypeMessage, ID: r.newID(), ParentID: r.leafID,
		Timestamp: workflow.Now(ctx).UTC(), Message: &user,
	}
	if err := r.append(ctx, userEntry); err != nil {
		return r.fail(ctx, err.Error())
	}
	r.leafID = userEntry.ID
	r.messageCount++

	for {
		if r.aborted {
			return r.finishAborted(ctx)
		}
		res, err := r.callModel(ctx)
		if err != nil {
			return r.fail(ctx, err.Error())
		}
		outcome := r.outcome(res)
		d := r.chain.Next(outcome, r.settings, workflow.Now(ctx))
		// An overflow error goes to compaction; a successful answer that
		// reports a silent overflow is handled by the threshold check.
		overflow := d.Classification.Class == retry.ClassContextOverflow && res.StopReason == agent.StopReasonError
		willRetry := d.Retry || (overflow && r.overflowRecoveryPossible())

		r.emit(ctx, agent.Event{Type: agent.EventAgentEnd, WillRetry: willRetry,
			StopReason: res.StopReason, ErrorMessage: res.ErrorMessage})
		r.emitRetryEnd(ctx, d.End)

		if d.Retry {
			if cont, result, err := r.retryAfterBackoff(ctx, &d, res); !cont {
				return result, err
			}
			continue
		}

		switch {
		case res.StopReason == agent.StopReasonAborted:
			r.advance(res.EntryID)
			return r.finishAborted(ctx)
		case overflow:
			// Never retried (SPEC 1): the compaction path decides.
			if cont, result, err := r.checkCompaction(ctx, res); !cont {
				return result, err
			}
			continue
		case res.StopReason == agent.StopReasonError:
			r.advance(res.EntryID)
			msg := res.ErrorMessage
			if d.End != nil && d.End.FinalError != "" {
				msg = d.End.FinalError
			}
			return r.fail(ctx, msg)
		}
		r.advance(res.EntryID)
		return r.completeTurn(ctx, res)
	}
}

// retryAfterBackoff runs SPEC 3 steps 7-11 for a retry decision: the
// usage-limit switch, auto_retry_start, dropping the error from the run
// context (the leaf does not move) and the cancellable durable wait.
func (r *run) retryAfterBackoff(ctx workflow.Context, d *retry.Decision, res activities.CallModelResult) (cont bool, result PromptResult, err error) {
	if d.UsageLimit {
		var mark activities.MarkUsageLimitResult
		err := workflow.ExecuteActivity(r.storeOptions(ctx), activities.MarkUsageLimitReachedName,
			activities.MarkUsageLimitInput{Provider: r.in.Model.Provider, Model: r.in.Model.Name,
				SessionID: r.in.SessionID, RetryAfterMs: d.BlockMs}).Get(ctx, &mark)
		if err != nil {
			workflow.GetLogger(ctx).Warn("mark usage limit reached failed; waiting the normal delay", "error", err.Error())
		} else if mark.Switched {
			d.Switched()
			if mark.Model != "" {
				r.in.Model.Name = mark.Model
			}
		}
	}
	st := d.Start
	r.emit(ctx, agent.Event{Type: agent.EventAutoRetryStart, Attempt: st.Attempt,
		MaxAttempts: st.MaxAttempts, DelayMs: st.DelayMs, ErrorMessage: st.ErrorMessage})

	if r.waitBackoff(ctx, st) {
		r.emitRetryEnd(ctx, r.chain.Cancel())
		r.advance(res.EntryID) // the last error stays the end of the conversation
		if r.aborted {
			result, err := r.finishAborted(ctx)
			return false, result, err
		}
		result, err := r.fail(ctx, fmt.Sprintf("%s (last error: %s)", agent.RetryCancelledMessage, res.ErrorMessage))
		return false, result, err
	}
	return true, PromptResult{}, nil
}

// waitBackoff waits the retry delay on a durable timer that abort_retry
// and abort cancel. It reports whether the wait was cancelled.
func (r *run) waitBackoff(ctx workflow.Context, st retry.StartEvent) (cancelled bool) {
	if r.aborted {
		return true
	}
	d := time.Duration(st.DelayMs) * time.Millisecond
	tctx, cancel := workflow.WithCancel(ctx)
	r.cancelTimer = cancel
	r.pending = &agent.PendingRetry{Attempt: st.Attempt, MaxAttempts: st.MaxAttempts,
		DelayMs: st.DelayMs, WakeAt: workflow.Now(ctx).Add(d).UTC()}
	summary := fmt.Sprintf("retry %d/%d after %s", st.Attempt, st.MaxAttempts, shorten(st.ErrorMessage, 80))
	workflow.SetCurrentDetails(ctx, fmt.Sprintf("Retrying (%d/%d) in %s: %s",
		st.Attempt, st.MaxAttempts, agent.FormatDelay(st.DelayMs), shorten(st.ErrorMessage, 200)))
	err := workflow.NewTimerWithOptions(tctx, d, workflow.TimerOptions{Summary: summary}).Get(ctx, nil)
	r.cancelTimer, r.pending = nil, nil
	cancel()
	if err != nil || ctx.Err() != nil {
		if ctx.Err() != nil { // the workflow itself was cancelled
			r.aborted = true
		}
		return true
	}
	return false
}

// callModel runs the CallModel activity, turning lost workers and
// cancellations into assistant messages (SPEC 7).
func (r *run) callModel(ctx workflow.Context) (activities.CallModelResult, error) {
	r.emit(ctx, agent.Event{Type: agent.EventAgentStart})
	entryID := r.newID()
	cctx, cancel := workflow.WithCancel(ctx)
	r.cancelCall = cancel
	r.streaming = true
	cctx = workflow.WithActivityOptions(cctx, workflow.ActivityOptions{
		StartToCloseTimeout: r.in.modelTimeout(),
		HeartbeatTimeout:    r.in.heartbeatTimeout(),
		// One attempt: model errors come back as data and the workflow's
		// retry policy (durable timer) is the only retry loop.
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		WaitForCancellation: true,
		Summary:             fmt.Sprintf("model call %s", entryID),
	})
	var res activities.CallModelResult
	err := workflow.ExecuteActivity(cctx, activities.CallModelName, activities.CallModelInput{
		SessionID: r.in.SessionID, LeafID: r.leafID, EntryID: entryID, Model: r.in.Model,
	}).Get(ctx, &res)
	r.cancelCall, r.streaming = nil, false
	cancel()

	if err != nil {
		synthetic, ferr := r.synthesize(ctx, entryID, err)
		if ferr != nil {
			return activities.CallModelResult{}, ferr
		}
		res = synthetic
	}
	view := agent.Message{Role: agent.RoleAssistant, StopReason: res.StopReason,
		ErrorMessage: res.ErrorMessage, ErrorStatus: res.ErrorStatus, ErrorType: res.ErrorType,
		Usage: res.Usage, Provider: r.in.Model.Provider, Model: r.in.Model.Name}
	if res.Text != "" {
		view.Content = []agent.ContentBlock{{Type: "text", Text: res.Text}}
	}
	r.emit(ctx, agent.Event{Type: agent.EventMessageEnd, EntryID: res.EntryID, Message: &view})
	return res, nil
}

// synthesize turns a failed CallModel activity into an assistant message
// and records it in the session (idempotent: if the activity managed to
// write its own message under the same id, that one stays).
func (r *run) synthesize(ctx workflow.Context, entryID string, err error) (activities.CallModelResult, error) {
	var timeoutErr *temporal.TimeoutError
	res := activities.CallModelResult{EntryID: entryID}
	switch {
	case temporal.IsCanceledError(err) || ctx.Err() != nil:
		if ctx.Err() != nil {
			r.aborted = true
		}
		res.StopReason, res.ErrorMessage = agent.StopReasonAborted, retry.AbortedMessage
	case errors.As(err, &timeoutErr):
		res.StopReason = agent.StopReasonError
		res.ErrorMessage = fmt.Sprintf(ConnectionLostMessage, timeoutName(timeoutErr))
	case permanentActivityError(err):
		return res, errors.New(rootMessage(err))
	default:
		res.StopReason = agent.StopReasonError
		res.ErrorMessage = "connection error: model call failed: " + rootMessage(err)
	}
	msg := agent.Message{Role: agent.RoleAssistant, Provider: r.in.Model.Provider, Model: r.in.Model.Name,
		StopReason: res.StopReason, ErrorMessage: res.ErrorMessage, Timestamp: workflow.Now(ctx).UnixMilli()}
	entry := session.Entry{Type: session.TypeMessage, ID: entryID, ParentID: r.leafID,
		Timestamp: workflow.Now(ctx).UTC(), Message: &msg}
	if werr := r.append(ctx, entry); werr != nil {
		return res, werr
	}
	return res, nil
}

// permanentActivityError reports an activity failure that no retry can
// fix (the session store, the input or the credentials are broken): the
// prompt fails with its message instead of retrying a "connection error".
func permanentActivityError(err error) bool {
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		return false
	}
	switch appErr.Type() {
	case activities.ErrTypeSessionStore, activities.ErrTypeBadInput, activities.ErrTypeCredentials:
		return true
	}
	return false
}

func timeoutName(te *temporal.TimeoutError) string {
	switch te.TimeoutType().String() {
	case "Heartbeat":
		return "heartbeat"
	case "StartToClose":
		return "start-to-close"
	case "ScheduleToClose":
		return "schedule-to-close"
	}
	return "activity"
}

// append writes entries to the session; it survives a cancelled workflow
// context so an abort never loses what was already decided.
func (r *run) append(ctx workflow.Context, entries ...session.Entry) error {
	if ctx.Err() != nil {
		ctx, _ = workflow.NewDisconnectedContext(ctx)
	}
	err := workflow.ExecuteActivity(r.storeOptions(ctx), activities.AppendEntriesName,
		activities.AppendEntriesInput{SessionID: r.in.SessionID, Entries: entries}).Get(ctx, nil)
	if err != nil {
		return fmt.Errorf("write session %s: %s", r.in.SessionID, rootMessage(err))
	}
	return nil
}

// advance makes entryID the end of the run context.
func (r *run) advance(entryID string) {
	r.leafID = entryID
	r.messageCount++
}

func (r *run) outcome(res activities.CallModelResult) retry.Outcome {
	o := retry.Outcome{
		StopReason:    string(res.StopReason),
		ErrorMessage:  res.ErrorMessage,
		ErrorStatus:   res.ErrorStatus,
		ErrorType:     res.ErrorType,
		ShouldRetry:   res.ShouldRetry,
		ContextWindow: r.in.Model.ContextWindow,
	}
	if res.Usage != nil {
		o.InputTokens, o.CacheReadTokens = res.Usage.Input, res.Usage.CacheRead
	}
	return o
}

func (r *run) complete(ctx workflow.Context, text string) (PromptResult, error) {
	r.status = agent.StatusCompleted
	r.emit(ctx, agent.Event{Type: agent.EventPromptEnd, Status: r.status})
	return PromptResult{Status: r.status, Text: text, LeafID: r.leafID, Events: r.seq}, nil
}

func (r *run) fail(ctx workflow.Context, msg string) (PromptResult, error) {
	r.status = agent.StatusFailed
	r.emit(ctx, agent.Event{Type: agent.EventPromptEnd, Status: r.status, ErrorMessage: msg})
	res := PromptResult{Status: r.status, Error: msg, LeafID: r.leafID, Events: r.seq}
	return res, temporal.NewNonRetryableApplicationError(msg, ErrTypePromptFailed, nil, res)
}

func (r *run) finishAborted(ctx workflow.Context) (PromptResult, error) {
	r.status = agent.StatusAborted
	r.emit(ctx, agent.Event{Type: agent.EventPromptEnd, Status: r.status})
	res := PromptResult{Status: r.status, Error: "prompt aborted", LeafID: r.leafID, Events: r.seq}
	if ctx.Err() != nil {
		// Cancelled through Temporal (UI, `temporal workflow cancel`):
		// report it as a cancellation so the run shows as Canceled.
		return res, temporal.NewCanceledError(res)
	}
	return res, temporal.NewNonRetryableApplicationError("prompt aborted", ErrTypePromptAborted, nil, res)
}

// rootMessage is the activity's own error text: the message of the first
// application error in the chain (Temporal wraps it in "activity error
// (type: ..., scheduledEventID: ...)" layers, and below it repeats each
// Go cause as a further application error, down to a bare "permission
// denied" that no longer names the file). Without an application error,
// the innermost text.
func rootMessage(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Message() != "" {
		return appErr.Message()
	}
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err.Error()
		}
		err = next
	}
}

func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
