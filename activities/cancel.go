package activities

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
)

// cancelledWithoutAbort reports whether the activity's context has ended
// for anything but an abort the workflow asked for (issue 15 item 4). The
// SDK cancels the context with a CanceledError as the cause only when a
// heartbeat's response (or the server's cancel command) says cancellation
// was requested. A heartbeat that fails (server unreachable, call no
// longer known, paused, reset) cancels it with that error as the cause; a
// worker shutting down cancels it with context.Canceled; a deadline ends
// it with context.DeadlineExceeded. CallModel, RunTool and UserBash write
// their "aborted" / "cancelled" record only for an abort; otherwise they
// write nothing, so that the workflow's record of the lost call stands.
func cancelledWithoutAbort(ctx context.Context) bool {
	return ctx.Err() != nil && !temporal.IsCanceledError(context.Cause(ctx))
}

// workerStopping reports whether the worker is shutting down (its stop
// channel is closed), as opposed to the workflow cancelling the activity.
func workerStopping(ctx context.Context) bool {
	select {
	case <-activity.GetWorkerStopChannel(ctx):
		return true
	default:
		return false
	}
}

// cutError is the error of an activity whose context ended without an
// abort (cancelledWithoutAbort) and that wrote no result: one typed error
// per way the call was cut, so that the workflow words it from the type
// and never as "context canceled" (issue 20 item 5, spec 13.4.7). A worker
// shutting down is ErrTypeWorkerStopped; anything else — the SDK cancels
// the context when heartbeats fail (a starved worker, the server
// unreachable or no longer knowing the call) or the deadline passes — is
// ErrTypeCallCut. Both are retryable: a read-only tool runs again, bash
// has one attempt and its outcome is unknown.
func cutError(ctx context.Context, what string) error {
	if workerStopping(ctx) {
		return temporal.NewApplicationError(fmt.Sprintf("worker stopped while %s ran: %v", what, ctx.Err()), ErrTypeWorkerStopped)
	}
	cause := context.Cause(ctx)
	if cause == nil {
		cause = ctx.Err()
	}
	return temporal.NewApplicationError(fmt.Sprintf("%s was cut by its worker without an abort: %v", what, cause), ErrTypeCallCut)
}
