package control

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/internal/live"
)

// Heartbeats is the live.Source of today's transport: a running
// CallModel or RunTool activity publishes its live.Snapshot as its
// heartbeat details, and Read reads the pending activities' details with
// DescribeWorkflowExecution. Follow uses the same reading on the Describe
// it makes for the workflow's status anyway (no second RPC) when its
// Controller has no other Source.
type Heartbeats struct {
	Client client.Client
	// DataConverter decodes the details (nil: the default converter).
	DataConverter converter.DataConverter
}

// Read implements live.Source.
func (h Heartbeats) Read(ctx context.Context, workflowID, runID string) ([]live.Stamped, error) {
	resp, err := h.Client.DescribeWorkflowExecution(ctx, workflowID, runID)
	if err != nil {
		return nil, err
	}
	dc := h.DataConverter
	if dc == nil {
		dc = converter.GetDefaultDataConverter()
	}
	return heartbeatSnapshots(resp, dc)
}

// heartbeatSnapshots decodes the stream snapshots in the heartbeat
// details of a Describe's pending activities (an activity without one
// has none; details that are not a snapshot are another activity's).
// err is set when some details could not be decoded at all (another
// payload codec key, or none): the others are returned.
func heartbeatSnapshots(resp *workflowservice.DescribeWorkflowExecutionResponse, dc converter.DataConverter) (out []live.Stamped, err error) {
	for _, pa := range resp.GetPendingActivities() {
		details := pa.GetHeartbeatDetails()
		if len(details.GetPayloads()) == 0 {
			continue
		}
		var raw json.RawMessage
		if e := dc.FromPayloads(details, &raw); e != nil {
			err = e
			continue
		}
		var snap live.Snapshot
		if json.Unmarshal(raw, &snap) != nil || (snap.Kind != live.KindModel && snap.Kind != live.KindTool) {
			continue
		}
		s := live.Stamped{Snapshot: snap, Call: pa.GetActivityId()}
		if t := pa.GetLastHeartbeatTime(); t != nil {
			s.At = t.AsTime()
		}
		out = append(out, s)
	}
	return out, err
}

// beatClock predicts when the next heartbeat of each running activity
// reaches Temporal, so that Follow reads the live output just after it
// lands instead of on a fixed cadence (a cadence of D adds up to D of
// delay, on top of the worker's heartbeat throttle).
//
// The worker's SDK sends a streaming activity's heartbeats one throttle
// interval apart (plus the RPC's own time), and Temporal stamps each with
// its clock (PendingActivityInfo.LastHeartbeatTime). The clock learns the
// period of each activity from the differences of those stamps (the
// server's clock only: no skew), and the offset between the server's
// clock and this one from when Describes saw a new heartbeat: a heartbeat
// first seen by a Describe sent at s and answered at r, and not seen by
// the Describe sent before at s0, reached the server after s0 and before
// r (local time), which bounds the offset from both sides. The bounds
// narrow with every heartbeat; a step of either clock that makes them
// contradict each other starts them again.
//
// It is pure: the caller passes the times.
type beatClock struct {
	interval time.Duration // the stream interval: the expected period
	guard    time.Duration // read this long after the predicted landing
	retry    time.Duration // re-read this often when a heartbeat is late
	acts     map[string]*beat
	// lo < offset <= hi, offset = local clock - server clock; bounded
	// says hi is known, hasLo that lo is.
	lo, hi         time.Duration
	bounded, hasLo bool
	// sent is when the latest Describe observed was sent (zero: none).
	sent time.Time
}

// beat is one activity's heartbeats as seen.
type beat struct {
	last  time.Time       // server time of the latest heartbeat seen
	diffs []time.Duration // the latest differences between heartbeats
}

// maxBeatDiffs is how many differences the period is estimated from.
const maxBeatDiffs = 8

func newBeatClock(interval time.Duration) *beatClock {
	return &beatClock{
		interval: interval,
		guard:    min(max(interval/16, time.Millisecond), 15*time.Millisecond),
		retry:    max(interval/8, time.Millisecond),
		acts:     map[string]*beat{},
	}
}

// period is the time between two heartbeats of b: the median of the
// recent differences that are not multiples of the smallest one (those
// span heartbeats no Describe saw, or a pause; the throttle never sends
// sooner than its interval), within [interval/2, 4*interval].
func (c *beatClock) period(b *beat) time.Duration {
	if len(b.diffs) == 0 {
		return c.interval
	}
	least := slices.Min(b.diffs)
	single := make([]time.Duration, 0, len(b.diffs))
	for _, d := range b.diffs {
		if d < least*3/2 {
			single = append(single, d)
		}
	}
	slices.Sort(single)
	return min(max(single[len(single)/2], c.interval/2), 4*c.interval)
}

// observe records what a Describe sent at sent and answered at recv saw:
// the latest heartbeat time of each running activity that has one, by
// activity id.
func (c *beatClock) observe(sent, recv time.Time, beats map[string]time.Time) {
	for id := range c.acts {
		if _, ok := beats[id]; !ok {
			delete(c.acts, id)
		}
	}
	for id, h := range beats {
		b := c.acts[id]
		switch {
		case b == nil:
			c.acts[id] = &beat{last: h}
			c.bound(time.Time{}, recv, h)
		case h.After(b.last):
			b.diffs = append(b.diffs, h.Sub(b.last))
			if len(b.diffs) > maxBeatDiffs {
				b.diffs = b.diffs[1:]
			}
			b.last = h
			c.bound(c.sent, recv, h)
		}
	}
	c.sent = sent
}

// bound narrows the offset with a heartbeat stamped h (server time) that
// the Describe answered at recv saw and, when before is set, the one sent
// at before did not.
func (c *beatClock) bound(before, recv, h time.Time) {
	hi := recv.Sub(h)
	var lo time.Duration
	hasLo := !before.IsZero()
	if hasLo {
		lo = before.Sub(h)
	}
	if !c.bounded || hi < c.hi {
		c.hi = hi
	}
	c.bounded = true
	if hasLo && (!c.hasLo || lo > c.lo) {
		c.lo, c.hasLo = lo, true
	}
	if c.hasLo && c.lo >= c.hi { // a clock stepped: start again from this heartbeat
		c.hi, c.lo, c.hasLo = hi, lo, hasLo
	}
}

// next is when to Describe to see the next heartbeat of a running
// activity soon after it lands; zero when there is no prediction (no
// heartbeat seen yet, or every one is overdue by more than half a period:
// the activity paused, and Follow falls back on its poll).
func (c *beatClock) next() time.Time {
	if !c.bounded {
		return time.Time{}
	}
	// Aim at the middle of what the offset may be: a read that comes too
	// early raises lo, one that sees the heartbeat lowers hi, so the
	// bounds close in (to about a Describe's round trip).
	off := c.hi
	if c.hasLo {
		off = c.lo + (c.hi-c.lo)/2
	}
	var best time.Time
	for _, b := range c.acts {
		p := c.period(b)
		due := b.last.Add(p + off + c.guard) // local time
		if !c.sent.Before(due) {
			// The latest Describe was sent after the predicted landing
			// and did not see it: it is late.
			if c.sent.Sub(due) >= p/2 {
				continue
			}
			due = c.sent.Add(c.retry)
		}
		if best.IsZero() || due.Before(best) {
			best = due
		}
	}
	return best
}
