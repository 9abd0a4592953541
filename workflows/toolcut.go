package workflows

import (
	"context"
	"errors"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
)

// callCut is how a tool call's activity ended without reporting its
// result (spec 13.4.7, issue 20 item 5).
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
// the activity's message (stopped, unasked, failed). Prompts
// (recordToolFailure) and user commands (Bash) word it; a command cut any
// way but an abort may or may not have completed, and is never reported
// as the SDK's "context canceled". An untyped "context canceled" or
// "context deadline exceeded" (a worker from before ErrTypeCallCut, or
// the SDK refusing a cancel nobody asked for) is a cut nobody asked for.
func cutOf(ctx workflow.Context, err error) (callCut, string) {
	var timeoutErr *temporal.TimeoutError
	var appErr *temporal.ApplicationError
	switch {
	case temporal.IsCanceledError(err) || ctx.Err() != nil:
		return cutAborted, ""
	case errors.As(err, &timeoutErr):
		return cutLost, timeoutName(timeoutErr)
	case errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeWorkerStopped:
		return cutStopped, appErr.Message()
	case errors.As(err, &appErr) && (appErr.Type() == activities.ErrTypeCallCut ||
		appErr.Message() == context.Canceled.Error() || appErr.Message() == context.DeadlineExceeded.Error() ||
		strings.HasPrefix(appErr.Message(), "unexpected activity cancel error")):
		return cutUnasked, appErr.Message()
	}
	return cutFailed, rootMessage(err)
}
