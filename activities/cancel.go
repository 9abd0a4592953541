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

// cutError is the error of an activity whose context ended without an
// abort (cancelledWithoutAbort) and that wrote no result, typed by how the
// call was cut (ErrTypeWorkerStopped, ErrTypeCallCut; spec 13.4.7), so the
// workflow never words it as "context canceled" (issue 20 item 5).
func cutError(ctx context.Context, what string) error {
	select {
	case <-activity.GetWorkerStopChannel(ctx):
		return temporal.NewApplicationError(fmt.Sprintf("worker stopped while %s ran: %v", what, ctx.Err()), ErrTypeWorkerStopped)
	default:
	}
	// The cause is ctx.Err() when the context ended without one.
	return temporal.NewApplicationError(fmt.Sprintf("%s was cut by its worker without an abort: %v", what, context.Cause(ctx)), ErrTypeCallCut)
}
