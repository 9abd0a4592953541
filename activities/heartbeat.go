package activities

import (
	"cmp"
	"context"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/durableagent/durableagent/internal/live"
)

// heartbeater records heartbeats until stop is called. A heartbeat tells
// Temporal the worker is alive (a slow model or a long build is not a dead
// worker), carries cancellation back to the activity, and its details are
// the activity's live output: the server keeps only the latest details,
// in the workflow's mutable state, never in history.
//
// Details that are a live stream (*live.Accumulator) are recorded as soon
// as they change, at most every recordGap, and at least every interval;
// other details on a ticker at the interval. Recording is local: the SDK
// sends at most one heartbeat RPC per throttle interval
// (worker.Options.MaxHeartbeatThrottleInterval) and keeps the latest
// details recorded in between, so recording on change costs no RPC and
// the heartbeat that leaves at the end of a throttle window carries a
// snapshot at most recordGap old instead of up to a whole tick.
type heartbeater struct {
	ctx    context.Context
	record func(ctx context.Context, details ...any)
	// details are what each record sends: a stream's snapshot (a pushed
	// call's with its push address), anything else as it is.
	details func() any

	done     chan struct{}
	finished chan struct{}
	// undo ends, in order, HeartbeatGuard's keeping of the call's
	// heartbeats, its push stream or the watch of its changes.
	undo []func()
}

// Heartbeat loop bounds.
const (
	// minHeartbeatInterval bounds the ticker from below.
	minHeartbeatInterval = 50 * time.Millisecond
	// minRecordGap and maxRecordGap bound the pause between two records
	// of a live stream (a tenth of the interval).
	minRecordGap = 10 * time.Millisecond
	maxRecordGap = 50 * time.Millisecond
)

// startHeartbeat starts recording heartbeats with details: a
// *live.Accumulator (its snapshot, recorded on change) or a value (sent
// as it is). Nothing is recorded during the first interval: the SDK
// sends a first heartbeat at once, and a heartbeat is a write of the
// workflow's mutable state on the server, so a call that ends within the
// interval (most tool calls, a fast or failing model call) costs the
// server nothing for it; its result follows in the same time anyway.
// Liveness needs no early beat (the heartbeat timeout is many intervals),
// and an abort reaches the call at its first beat.
func (a *Activities) startHeartbeat(ctx context.Context, details any) *heartbeater {
	interval := max(cmp.Or(a.HeartbeatInterval, MaxHeartbeatInterval), minHeartbeatInterval)
	h := &heartbeater{ctx: ctx, record: a.recordHeartbeat, details: func() any { return details },
		done: make(chan struct{}), finished: make(chan struct{})}
	if h.record == nil {
		h.record = activity.RecordHeartbeat
	}
	// A pushed call beats every MaxHeartbeatInterval (an abort reaches
	// the call at a beat), bounded by a quarter of the heartbeat timeout
	// (liveness), never below interval.
	pushBeat := MaxHeartbeatInterval
	if activity.IsActivity(ctx) {
		info := activity.GetInfo(ctx)
		pushBeat = cmp.Or(min(info.HeartbeatTimeout/4, pushBeat), pushBeat)
		// A heartbeat RPC that times out must not cut the call
		// (heartbeatguard.go).
		h.undo = append(h.undo, guardHeartbeats(info.TaskToken, info.HeartbeatTimeout))
	}
	acc, _ := details.(*live.Accumulator)
	switch {
	case acc != nil && a.Push != nil:
		// Followers get the output from the worker's push hub as it
		// changes; the heartbeats carry where (and the output, for a
		// follower that cannot reach it) at a slower beat.
		p, unpublish := a.Push.Publish(acc)
		h.undo = append(h.undo, unpublish)
		h.details = func() any {
			s := acc.Snapshot()
			s.Push = &p
			return s
		}
		first := interval
		if acc.Snapshot().Kind == live.KindModel {
			// A model call streams for seconds: its first beat carries
			// the push address early, so followers get its first words
			// from the stream rather than from a late snapshot.
			first = min(interval, pushFirstBeat)
		}
		go h.beat(first, max(pushBeat, interval), nil, 0)
	case acc != nil:
		changed, unwatch := acc.Watch()
		h.undo, h.details = append(h.undo, unwatch), func() any { return acc.Snapshot() }
		go h.beat(interval, interval, changed, min(max(interval/10, minRecordGap), maxRecordGap))
	default:
		go h.beat(interval, interval, nil, 0)
	}
	return h
}

// pushFirstBeat bounds the first heartbeat of a pushed model call.
const pushFirstBeat = 50 * time.Millisecond

// beat records the details after first, then every beat (a pushed
// call's first beat comes early, so a follower learns the push address
// soon). With changed (a stream's changes) it also records as soon as
// they change, then pauses gap, so a burst of changes costs one record.
func (h *heartbeater) beat(first, beat time.Duration, changed <-chan struct{}, gap time.Duration) {
	defer close(h.finished)
	t := time.NewTimer(first)
	defer t.Stop()
	if !h.wait(t.C, nil) { // the first interval: no record (see startHeartbeat)
		return
	}
	for n := 0; ; n++ {
		select { // the changes so far are in this record
		case <-changed:
		default:
		}
		h.record(h.ctx, h.details())
		t.Reset(beat)
		if changed != nil && n > 0 {
			if !h.wait(time.After(gap), nil) { // collected unfired since Go 1.23
				return
			}
		}
		if !h.wait(t.C, changed) {
			return
		}
	}
}

// wait waits for c or changed (nil: never): false when the heartbeats
// stop first.
func (h *heartbeater) wait(c <-chan time.Time, changed <-chan struct{}) bool {
	select {
	case <-h.done:
		return false
	case <-h.ctx.Done():
		return false
	case <-c:
	case <-changed:
	}
	return true
}

// stop ends the loop and waits for it.
func (h *heartbeater) stop() {
	close(h.done)
	<-h.finished
	for _, undo := range h.undo {
		undo()
	}
}
