package activities

import (
	"context"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
)

// heartbeater records a heartbeat on a ticker until stop is called. A
// heartbeat tells Temporal the worker is alive (a slow model or a long
// build is not a dead worker), carries cancellation back to the activity,
// and its details are the activity's live output: the server keeps only
// the latest details, in the workflow's mutable state, never in history.
type heartbeater struct {
	ctx    context.Context
	record func(ctx context.Context, details ...any)

	mu      sync.Mutex
	details any

	done     chan struct{}
	finished chan struct{}
}

// startHeartbeat starts the ticker with details as the first heartbeat.
func (a *Activities) startHeartbeat(ctx context.Context, details any) *heartbeater {
	interval := a.HeartbeatInterval
	if interval <= 0 {
		// A heartbeat is also how a cancellation (abort) reaches the
		// activity, so beat at least every second.
		interval = min(activity.GetInfo(ctx).HeartbeatTimeout/4, MaxHeartbeatInterval)
	}
	if interval <= 0 {
		interval = MaxHeartbeatInterval
	}
	if interval < 50*time.Millisecond {
		interval = 50 * time.Millisecond
	}
	h := &heartbeater{ctx: ctx, record: a.recordHeartbeat, details: details,
		done: make(chan struct{}), finished: make(chan struct{})}
	if h.record == nil {
		h.record = activity.RecordHeartbeat
	}
	h.record(ctx, h.current())
	go func() {
		defer close(h.finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-h.done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				h.record(ctx, h.current())
			}
		}
	}()
	return h
}

// current is the details to send: a func() any is asked each time (a
// stream's snapshot), anything else is sent as it is.
func (h *heartbeater) current() any {
	h.mu.Lock()
	d := h.details
	h.mu.Unlock()
	if f, ok := d.(func() any); ok {
		return f()
	}
	return d
}

// stop ends the ticker and waits for it.
func (h *heartbeater) stop() {
	close(h.done)
	<-h.finished
}
