package client

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/internal/live"
)

// The push path on the follower side (docs/live.md, "The push path"): one
// stream per running call and reader; one that cannot be opened or fails
// is not tried again for that call (the heartbeats carry its output).

// pushed counts the snapshots push streams brought in this process.
var pushed atomic.Int64

// PushedSnapshots is the number of snapshots push streams brought in
// this process (the bench reports which transport served).
func PushedSnapshots() int64 { return pushed.Load() }

// pushReader holds a reader's push streams.
type pushReader struct {
	mu      sync.Mutex
	streams map[string]*pushStream // by call (activity id)
	wake    chan struct{}          // a token when a stream brought something or ended
	// out gets each snapshot as it arrives.
	out *reader
	// ended: a stream that was open ended since take.
	ended bool
	dc    converter.DataConverter
}

// pushStream is the stream of one call.
type pushStream struct {
	url    string
	cancel context.CancelFunc
	latest live.Stamped
	fresh  bool // latest not taken yet
	open   bool // a line came
	over   bool // ended or failed
	err    error
}

// newPushReader passes what its streams bring to out. Its streams open
// sealed lines with dc, the converter the heartbeat details are decoded
// with (the client's payload codec): a worker with a codec key seals what
// it pushes (spec 13.10.9). A line that does not open ends its stream,
// and the reader stays on the heartbeats.
func newPushReader(out *reader, dc converter.DataConverter) *pushReader {
	return &pushReader{streams: map[string]*pushStream{}, wake: make(chan struct{}, 1), out: out, dc: dc}
}

// observe opens the streams of the running calls pending names (the
// snapshots of one Describe) that have one, and closes those of calls
// no longer running.
func (p *pushReader) observe(ctx context.Context, pending []live.Stamped) {
	p.mu.Lock()
	defer p.mu.Unlock()
	running := map[string]bool{}
	for _, s := range pending {
		if s.Call == "" {
			continue
		}
		running[s.Call] = true
		if s.Push == nil {
			continue
		}
		if st := p.streams[s.Call]; st != nil {
			if st.url == s.Push.URL {
				continue
			}
			st.cancel() // another attempt of the call
		}
		p.start(ctx, s.Call, *s.Push)
	}
	for call, st := range p.streams {
		if !running[call] {
			st.cancel()
			delete(p.streams, call)
		}
	}
}

// start opens the stream of call (caller holds mu).
func (p *pushReader) start(ctx context.Context, call string, push live.Push) {
	sctx, cancel := context.WithCancel(ctx)
	st := &pushStream{url: push.URL, cancel: cancel}
	p.streams[call] = st
	go func() {
		err := live.Subscribe(sctx, push, p.dc, func(s live.Snapshot, at time.Time) {
			pushed.Add(1)
			stamped := live.Stamped{Snapshot: s, Call: call, At: at}
			// Straight to the followers, not behind the reader's RPCs:
			// each passes it on only for an entry it has live events of
			// (so after its message_start); the reader's loop passes on
			// the first ones of an entry after its events query.
			p.out.snapshots([]live.Stamped{stamped}, false)
			p.mu.Lock()
			st.latest = stamped
			st.fresh, st.open = true, true
			p.mu.Unlock()
			p.signal()
		})
		p.mu.Lock()
		st.over, st.err = true, err
		p.ended = p.ended || st.open
		p.mu.Unlock()
		cancel()
		p.signal()
	}()
}

func (p *pushReader) signal() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// take returns the snapshots the streams brought since the last take
// (the latest of each call), and whether a stream that was open ended
// since then (the call ended: its message_end is due).
func (p *pushReader) take() (out []live.Stamped, ended bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, st := range p.streams {
		if st.fresh {
			st.fresh = false
			out = append(out, st.latest)
		}
	}
	ended, p.ended = p.ended, false
	return out, ended
}

// newest puts in pending (the snapshots of one Describe) the latest
// snapshot each call's push stream brought, where that is not older:
// the heartbeats come once a second while a call pushes, so a Describe
// carries an older state than the stream already passed on, and a tool's
// rolling tail read after a newer one looks like new output (a user
// command's update repeated its first lines). While the stream is open
// its snapshot stands; once it ended, only when it is not older than the
// heartbeat. The Describe's Push, Call and At stay.
func (p *pushReader) newest(pending []live.Stamped) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, s := range pending {
		st := p.streams[s.Call]
		if st == nil || !st.open || st.latest.EntryID != s.EntryID || st.latest.Attempt != s.Attempt {
			continue
		}
		if st.over && st.latest.At.Before(s.At) {
			continue
		}
		pending[i].Snapshot, pending[i].Push = st.latest.Snapshot, s.Push
	}
}

// keep gives s back to take, unless its stream brought a newer one.
func (p *pushReader) keep(s live.Stamped) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if st := p.streams[s.Call]; st != nil && !st.fresh {
		st.latest, st.fresh = s, true
	}
}

// streaming says a stream is open: the heartbeats need not be read on
// their beat.
func (p *pushReader) streaming() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, st := range p.streams {
		if st.open && !st.over {
			return true
		}
	}
	return false
}

// pushQueryInterval is the events query's poll while a push stream is
// open: the call's output comes by the stream, its end is queried when
// the stream ends, and other events (a steering message) wait up to this.
// At 100 prompts the queries, not the deltas, were what loaded the
// server (bench/RESULTS.md, fanout rows).
const pushQueryInterval = time.Second

// queryInterval is how often the events are queried.
func (f *follower) queryInterval() time.Duration {
	if f.push.streaming() {
		return max(f.poll, pushQueryInterval)
	}
	return f.poll
}

// emitPushed passes the pushed snapshots on after an events query
// (queried), which lets the followers start the entries they had no live
// event of (the streams pass the others on as they come). A snapshot of
// an entry new to the reader is kept until then, and the query made at
// once.
func (f *follower) emitPushed(pushed []live.Stamped, queried bool) {
	if len(pushed) == 0 {
		return
	}
	var out []live.Stamped
	for _, p := range pushed {
		switch {
		case queried:
			f.live.Diff(p.Snapshot)
			out = append(out, p)
			continue
		case f.live.Known(p.Snapshot):
			continue // the stream passed it on as it came
		}
		f.push.keep(p)
		f.lastQuery = time.Time{}
	}
	if len(out) > 0 {
		f.out.snapshots(out, queried)
	}
}
