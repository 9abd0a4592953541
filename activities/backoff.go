package activities

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/retry"
)

// Coordinated backoff (docs/spec.md 18.1): a rate limit with a retry
// hint opens a window on the credential (kept by the auth store, shared
// by the workers that share it), and CallModel holds every other call of
// that credential before sending it, heartbeating, until one probe's
// outcome clears the window. A held call is not a failed attempt: the
// workflow's retry chain and history are as without coordination. The
// hold is bounded (maxHold, and half the time left before the deadline).

// RateWindows is the part of the auth store that keeps the rate-limit
// windows (auth.File, pgstore.Windows). Keys are auth.WindowKey values;
// holder identifies one model call.
type RateWindows interface {
	// Admit answers whether to call now (Wait 0, maybe holding the probe
	// lease) or to hold for Wait before asking again.
	Admit(key, holder string, lease time.Duration) (auth.Admission, error)
	// RateLimited opens or extends the window for the provider's hint.
	RateLimited(key string, retryAfterMs int64) error
	// Settle says the provider took holder's call (a probe's success
	// ends the window).
	Settle(key, holder string) error
	// Release gives up holder's probe lease without an outcome.
	Release(key, holder string) error
}

// Bounds of the hold.
const (
	// maxHold bounds how long one call holds for windows.
	maxHold = 5 * time.Minute
	// probeLease is how long a probe holds its lease before
	// another caller may probe: it covers the probe's time to the first
	// streamed piece (the lease is settled then), or to its error.
	probeLease = 30 * time.Second
	// maxHoldPoll bounds one pause of a caller waiting on another's probe.
	maxHoldPoll = 500 * time.Millisecond
)

// callWindow is one model call's part in its credential's window.
type callWindow struct {
	a      *Activities
	ctx    context.Context
	key    string
	holder string
	// settleOnce reports the call's outcome once.
	settleOnce sync.Once
}

// hold waits, heartbeating through the caller's heartbeater, until the
// window of key lets the call go, ctx ends, or the hold's bound is
// reached. It returns how long it held: 0 when the window let the call go
// at once (the store's own round trip is not a hold). Store errors end
// the hold: the coordination is an optimisation, never a reason to fail
// a call.
func (a *Activities) hold(ctx context.Context, provider, credID string) (cw *callWindow, held time.Duration) {
	if a.Windows == nil {
		return nil, 0
	}
	// The holder is this execution of the call: its activity, attempt and
	// a nonce, so a zombie attempt still running beside its retry (or two
	// test environments with the same ids) never share a probe lease.
	info := activity.GetInfo(ctx)
	cw = &callWindow{a: a, ctx: ctx, key: auth.WindowKey(provider, credID),
		holder: fmt.Sprintf("%s/%s/%s/%d/%016x", info.WorkflowExecution.ID, info.WorkflowExecution.RunID, info.ActivityID, info.Attempt, rand.Uint64())}
	bound := maxHold
	if !info.Deadline.IsZero() {
		bound = min(bound, time.Until(info.Deadline)/2)
	}
	start, waited := time.Now(), false
	defer func() {
		if waited {
			held = time.Since(start)
		}
	}()
	for {
		adm, err := a.Windows.Admit(cw.key, cw.holder, probeLease)
		if err != nil {
			activity.GetLogger(ctx).Warn("rate-limit window: admit", "key", cw.key, "error", err)
			return cw, 0
		}
		if adm.Wait <= 0 {
			return cw, 0
		}
		left := bound - time.Since(start)
		if left <= 0 {
			return cw, 0
		}
		waited = true
		// Waiting for the window's end: wake at it, spread a little so
		// the callers do not all queue on the store's lock at once.
		// Waiting for another call's probe: ask again soon, its outcome
		// may come long before its lease ends.
		wait := adm.Wait + time.Duration(rand.Int64N(int64(50*time.Millisecond)))
		if adm.Probing {
			wait = maxHoldPoll/2 + time.Duration(rand.Int64N(int64(maxHoldPoll/2)))
		}
		select {
		case <-ctx.Done():
			return cw, 0
		case <-time.After(min(wait, left)):
		}
	}
}

// through reports that the provider took the call (its first streamed
// piece arrived): a probe's success opens the window for everyone at
// once rather than after a long answer.
func (cw *callWindow) through() {
	if cw == nil {
		return
	}
	cw.settleOnce.Do(func() {
		if err := cw.a.Windows.Settle(cw.key, cw.holder); err != nil {
			activity.GetLogger(cw.ctx).Warn("rate-limit window: settle", "key", cw.key, "error", err)
		}
	})
}

// finish reports the call's outcome: a rate limit with a hint opens or
// extends the window; an aborted call gives up its probe lease; anything
// else the provider answered settles it.
func (cw *callWindow) finish(msg agent.Message) {
	if cw == nil {
		return
	}
	// A retryable error (429, 529 overloaded, 503 ...) with the provider's
	// retry hint; usage limits are not windows: the auth store blocks the
	// credential and moves the session (MarkUsageLimitReached).
	c := retry.ClassifyAt(ModelErrorOf(msg).Outcome(msg.StopReason), time.Now())
	if msg.StopReason == agent.StopReasonError && c.Class == retry.ClassRetryable && c.HasHint && c.RetryAfterMs > 0 {
		// Also after a first piece settled the call: an overload can
		// arrive mid-stream.
		cw.settleOnce.Do(func() {})
		if err := cw.a.Windows.RateLimited(cw.key, c.RetryAfterMs); err != nil {
			activity.GetLogger(cw.ctx).Warn("rate-limit window: open", "key", cw.key, "error", err)
		}
		return
	}
	if msg.StopReason == agent.StopReasonAborted {
		cw.settleOnce.Do(func() {
			if err := cw.a.Windows.Release(cw.key, cw.holder); err != nil {
				activity.GetLogger(cw.ctx).Warn("rate-limit window: release", "key", cw.key, "error", err)
			}
		})
		return
	}
	cw.through()
}
