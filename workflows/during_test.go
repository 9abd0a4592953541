package workflows

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
)

// Helpers for tests that act "during" an activity (a signal while a tool
// runs, a query while a summary call hangs).
//
// A virtual-time callback (h.at, RegisterDelayedCallback) cannot promise
// that: while any activity runs, the SDK's test environment fires timers
// by wall time, so on a loaded machine under -race a callback "at 300 ms"
// comes while the activities before the one the test means still run, or
// after it. These helpers act from inside the activity itself instead.

// onLoop runs fn on the test environment's loop (where signals and
// queries belong) and waits until it has run. Called from inside an
// activity, fn therefore runs while that activity is in flight.
func (h *harness) onLoop(ctx context.Context, what string, fn func()) error {
	done := make(chan struct{})
	h.env.RegisterDelayedCallback(func() { fn(); close(done) }, 0)
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", what, ctx.Err())
	case <-time.After(time.Minute):
		return fmt.Errorf("%s did not run on the test environment's loop within a minute", what)
	}
}

// whileRunning runs an activity's real work (run) in the background and,
// once the file marker exists in the workspace (the command under test
// has started), runs fn on the test environment's loop; it returns what
// run returns. A command that ends before it writes marker is an error:
// the test would not have acted while it ran.
func whileRunning[R any](h *harness, ctx context.Context, marker string, run func() (R, error), fn func()) (R, error) {
	type result struct {
		r   R
		err error
	}
	ended := make(chan result, 1)
	go func() {
		r, err := run()
		ended <- result{r, err}
	}()
	path := filepath.Join(h.workspace, marker)
	deadline := time.After(time.Minute)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(path); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			var zero R
			return zero, fmt.Errorf("look for the start marker: %w", err)
		}
		select {
		case res := <-ended:
			var zero R
			return zero, fmt.Errorf("the command ended (%v) before it wrote its start marker %s", res.err, marker)
		case <-deadline:
			var zero R
			return zero, fmt.Errorf("the command wrote no start marker %s within a minute", marker)
		case <-tick.C:
		}
	}
	if err := h.onLoop(ctx, "the callback while the command runs", fn); err != nil {
		var zero R
		return zero, err
	}
	res := <-ended
	return res.r, res.err
}

// abortWhileToolRuns sets the tool worker to send abort once a tool call's
// command has written marker in the workspace: while it runs.
func (h *harness) abortWhileToolRuns(marker string) {
	h.runTool = func(ctx context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		return whileRunning(h, ctx, marker,
			func() (activities.RunToolResult, error) { return h.acts.RunTool(ctx, in) },
			func() { h.env.SignalWorkflow(agent.SignalAbort, nil) })
	}
}

// whenState runs fn on the test environment's loop as soon as the
// workflow's state satisfies ready (a retry waits, an approval is
// pending), checked every 10 ms of virtual time. While the workflow waits
// on a timer with no activity running, virtual time moves only through
// these checks, so fn runs at the start of that wait whatever the
// activities before it cost in wall time; a fixed "at 1 s" counted that
// wall time too. A check before the workflow has registered its state
// query (its first task) counts as not ready.
func (h *harness) whenState(ready func(agent.State) bool, fn func()) {
	var check func()
	check = func() {
		var st agent.State
		if v, err := h.env.QueryWorkflow(agent.QueryState); err == nil && v.Get(&st) == nil && ready(st) {
			fn()
			return
		}
		h.env.RegisterDelayedCallback(check, 10*time.Millisecond)
	}
	h.env.RegisterDelayedCallback(check, 10*time.Millisecond)
}

// retrying is whenState's test for a retry's backoff wait.
func retrying(st agent.State) bool { return st.PendingRetry != nil }

// approvalPending is whenState's test for a call waiting for approval.
func approvalPending(st agent.State) bool { return len(st.PendingApprovals) > 0 }
