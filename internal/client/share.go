package client

import (
	"context"
	"sync"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/live"
)

// Followers share their reads (docs/live.md, "The path", 2-3): the Follow
// calls of one Controller that follow the same prompt run (session and
// runID as asked) share one reader, whose follower loop fans the events
// and live snapshots out to each call's queue, applied on the call's own
// goroutine with its own cursor and `after`; the events are shared, read
// only. A Follow whose `after` is before the reader's log starts a reader
// of its own. The reader runs with the first Follow's context values but
// not its cancellation.

// maxShareLogBytes bounds the workflow events a reader keeps for Follow
// calls that join later (agent.EncodedSize).
const maxShareLogBytes = 8 << 20

// shareKey names what a reader reads.
type shareKey struct {
	k     *Controller
	wfID  string
	runID string // as asked: "" is the session's current run
}

// readers are the running shared readers.
var readers = struct {
	sync.Mutex
	m map[shareKey]*reader
}{m: map[shareKey]*reader{}}

// reader is one shared follower loop and its subscribers. Its fields
// are guarded by readers' mutex.
type reader struct {
	key    shareKey
	cancel context.CancelFunc
	// base: log holds every workflow event delivered after seq base.
	base     int64
	log      []agent.Event
	logBytes int
	subs     map[*subscription]bool
	done     bool
}

// followItem is one thing a reader passes on: a workflow event, a round
// of live snapshots, or the end of the reader.
type followItem struct {
	event   *agent.Event
	pending []live.Stamped
	queried bool // the round's events query came after its Describe
	final   bool
	end     agent.Event
	err     error
}

// subscription is one Follow call's queue.
type subscription struct {
	mu    sync.Mutex
	items []followItem
	wake  chan struct{} // a token when items were added
}

func (s *subscription) push(it followItem) {
	s.mu.Lock()
	if n := len(s.items); it.pending != nil && n > 0 && s.items[n-1].pending != nil &&
		(it.queried || !s.items[n-1].queried) {
		// The newer snapshots carry the older ones' bytes. Not over a
		// queried round by one that is not (a push stream's): the
		// queried one is what lets the follower start an entry.
		s.items[n-1] = it
	} else {
		s.items = append(s.items, it)
	}
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *subscription) take() []followItem {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.items
	s.items = nil
	return out
}

// subscribe joins the reader of key, or starts one (start makes its
// follower loop, for a reader that starts after seq after).
func subscribe(ctx context.Context, key shareKey, after int64, start func(out *reader) *follower) (*reader, *subscription) {
	sub := &subscription{wake: make(chan struct{}, 1)}
	readers.Lock()
	defer readers.Unlock()
	if r := readers.m[key]; r != nil && !r.done && after >= r.base {
		for i := range r.log {
			if r.log[i].Seq > after {
				sub.items = append(sub.items, followItem{event: &r.log[i]})
			}
		}
		r.subs[sub] = true
		return r, sub
	}
	r := &reader{key: key, base: after, subs: map[*subscription]bool{sub: true}}
	if readers.m[key] == nil {
		readers.m[key] = r
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	f := start(r)
	go r.run(rctx, f)
	return r, sub
}

// leave removes sub; the last one to leave stops the reader.
func (r *reader) leave(sub *subscription) {
	readers.Lock()
	defer readers.Unlock()
	delete(r.subs, sub)
	if len(r.subs) == 0 && !r.done {
		r.stop()
	}
}

// stop ends r and removes it from readers (caller holds the lock).
func (r *reader) stop() {
	r.done = true
	if readers.m[r.key] == r {
		delete(readers.m, r.key)
	}
	r.cancel()
}

func (r *reader) run(ctx context.Context, f *follower) {
	end, err := f.run(ctx)
	readers.Lock()
	defer readers.Unlock()
	r.stop()
	for s := range r.subs {
		s.push(followItem{final: true, end: end, err: err})
	}
	r.log = nil
}

// event passes on a workflow event, in seq order.
func (r *reader) event(e agent.Event) {
	readers.Lock()
	defer readers.Unlock()
	r.log = append(r.log, e)
	r.logBytes += agent.EncodedSize(e)
	for r.logBytes > maxShareLogBytes && len(r.log) > 1 {
		r.logBytes -= agent.EncodedSize(r.log[0])
		r.base = r.log[0].Seq
		r.log = r.log[1:]
	}
	for s := range r.subs {
		s.push(followItem{event: &e})
	}
}

// snapshots passes on a round of live snapshots (not empty), sorted by
// publication; queried says the events query ran after the Describe
// that read them (snapshots of entries the client has no live event of
// may then be passed on).
func (r *reader) snapshots(pending []live.Stamped, queried bool) {
	readers.Lock()
	defer readers.Unlock()
	for s := range r.subs {
		s.push(followItem{pending: pending, queried: queried})
	}
}

// delivery is one Follow call's side: its cursor, its seq and its fn.
type delivery struct {
	cur   *live.Cursor
	after int64
	fn    func(agent.Event)
}

func (d *delivery) event(e agent.Event) {
	if e.Seq <= d.after {
		return
	}
	for _, u := range d.cur.Finish(e) { // the words after the last snapshot
		u.Seq, u.Time = d.after, e.Time
		d.fn(u)
	}
	d.after = e.Seq
	d.cur.Observe(e)
	d.fn(e)
}

func (d *delivery) snapshots(pending []live.Stamped, queried bool) {
	for _, p := range pending {
		if !queried && !d.cur.Known(p.Snapshot) {
			continue
		}
		for _, e := range d.cur.Diff(p.Snapshot) {
			e.Seq = d.after
			e.Time = p.At.UTC()
			d.fn(e)
		}
	}
}

// consume delivers sub's items until the reader ends (its outcome) or
// ctx does.
func (d *delivery) consume(ctx context.Context, r *reader, sub *subscription) (agent.Event, error) {
	defer r.leave(sub)
	for {
		for _, it := range sub.take() {
			switch {
			case it.final:
				return it.end, it.err
			case it.event != nil:
				d.event(*it.event)
			default:
				d.snapshots(it.pending, it.queried)
			}
		}
		select {
		case <-ctx.Done():
			return agent.Event{}, ctx.Err()
		case <-sub.wake:
		}
	}
}
