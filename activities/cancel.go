package activities

import (
	"context"

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
