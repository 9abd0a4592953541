package workflows

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/retry"
)

// callCut is how a tool call's activity ended without reporting its
// result (spec 13.4.7).
type callCut int

const (
	// cutFailed: the activity failed for its own reason.
	cutFailed callCut = iota
	// cutAborted: the workflow cancelled it (abort).
	cutAborted
	// cutLost: its worker was lost; the server timed the call out.
	cutLost
	// cutStopped: its worker shut down gracefully and stopped it.
	cutStopped
	// cutUnasked: its worker's SDK cancelled it without the workflow
	// asking (heartbeats failed: a starved worker, the server unreachable
	// or no longer knowing the call) and the server took the failure.
	cutUnasked
)

// cutOf is the one mapping of a tool activity's error to the way the call
// was cut, with the detail its wording names: the timeout's name (lost),
// the activity's message (stopped, unasked, failed). toolCutText words it
// for prompts (recordToolFailure) and user commands (Bash): a command cut
// any way but an abort may or may not have completed, and is never
// reported as the SDK's "context canceled". An untyped "context canceled"
// or "context deadline exceeded" (a worker from before ErrTypeCallCut, or
// the SDK refusing a cancel nobody asked for) is a cut nobody asked for.
func cutOf(ctx workflow.Context, err error) (callCut, string) {
	var timeoutErr *temporal.TimeoutError
	var appErr *temporal.ApplicationError
	switch {
	case temporal.IsCanceledError(err) || ctx.Err() != nil:
		return cutAborted, ""
	case errors.As(err, &timeoutErr): // the timeout, named as the texts for people do
		return cutLost, cmp.Or(map[string]string{"Heartbeat": "heartbeat", "StartToClose": "start-to-close",
			"ScheduleToClose": "schedule-to-close"}[timeoutErr.TimeoutType().String()], "activity")
	case errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeWorkerStopped:
		return cutStopped, appErr.Message()
	case errors.As(err, &appErr) && (appErr.Type() == activities.ErrTypeCallCut ||
		appErr.Message() == context.Canceled.Error() || appErr.Message() == context.DeadlineExceeded.Error() ||
		strings.HasPrefix(appErr.Message(), "unexpected activity cancel error")):
		return cutUnasked, appErr.Message()
	}
	return cutFailed, rootMessage(err)
}

// toolCutText is the result of a tool call cut as cutOf says. A call of a
// tool that runs once (once: bash) cut any way but an abort may or may
// not have completed, so the model is told to check.
func toolCutText(cut callCut, detail string, once bool) string {
	switch {
	case cut == cutAborted:
		return ToolAbortedMessage
	case cut == cutLost && once:
		return fmt.Sprintf(ToolOutcomeUnknownMessage, detail)
	case cut == cutLost:
		return fmt.Sprintf(ToolLostMessage, detail)
	case cut == cutStopped && once:
		return ToolInterruptedMessage
	case cut == cutUnasked && once:
		return ToolCutMessage
	case cut == cutStopped || cut == cutUnasked:
		return ToolCutOffMessage
	}
	return fmt.Sprintf(ToolFailedMessage, detail)
}

// modelFailure maps a model call's failed activity (CallModel, Summarize;
// what names it), cut as cutOf says, to the assistant message the
// workflow records for it (SPEC 7): an abort is an aborted answer, a
// timeout (a dead worker) a retryable connection error, any other
// failure a connection error too, except one no retry can fix (the
// session store, the input or the credentials are broken), whose message
// comes back as fatal.
func (r *run) modelFailure(ctx workflow.Context, err error, what string) (stop agent.StopReason, msg, fatal string) {
	var appErr *temporal.ApplicationError
	switch cut, detail := cutOf(ctx, err); {
	case cut == cutAborted:
		if ctx.Err() != nil {
			r.aborted = true
		}
		return agent.StopReasonAborted, retry.AbortedMessage, ""
	case cut == cutLost:
		return agent.StopReasonError, fmt.Sprintf(ConnectionLostMessage, detail), ""
	case errors.As(err, &appErr) && slices.Contains([]string{activities.ErrTypeSessionStore,
		activities.ErrTypeBadInput, activities.ErrTypeCredentials}, appErr.Type()):
		return "", "", rootMessage(err)
	}
	return agent.StopReasonError, "connection error: " + what + " failed: " + rootMessage(err), ""
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
