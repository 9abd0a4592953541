package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/live"
)

// A round of snapshots read after an events query (the one that lets a
// follower start a new entry) is not replaced in a follower's queue by
// a pushed round that came after it: the follower would never start the
// entry, and get its text only at message_end.
func TestSubscription_QueriedRoundNotCoalescedAway(t *testing.T) {
	snap := []live.Stamped{{Snapshot: live.Snapshot{Kind: live.KindModel, EntryID: "a1"}}}
	s := &subscription{wake: make(chan struct{}, 1)}
	s.push(followItem{pending: snap, queried: true})
	s.push(followItem{pending: snap}) // pushed: not queried
	s.push(followItem{pending: snap}) // coalesces with the one before
	items := s.take()
	if len(items) != 2 || !items[0].queried || items[1].queried {
		t.Fatalf("queue %+v: want the queried round, then one pushed round", items)
	}
	s.push(followItem{pending: snap})
	s.push(followItem{pending: snap, queried: true}) // a queried round replaces a pushed one
	if items := s.take(); len(items) != 1 || !items[0].queried {
		t.Fatalf("queue %+v: want the queried round alone", items)
	}
}

// A push stream that cannot be opened leaves the reader on the
// heartbeats: not streaming (Describes keep their beat), nothing to
// take, and it is not tried again for the same call.
func TestPushReader_RefusedFallsBack(t *testing.T) {
	var mu sync.Mutex
	tries := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tries++
		mu.Unlock()
		http.Error(w, "live push: no running call has this token", http.StatusNotFound)
	}))
	defer srv.Close()
	p := newPushReader(&reader{}, nil)
	pending := []live.Stamped{{Snapshot: live.Snapshot{Kind: live.KindModel, EntryID: "a1",
		Push: &live.Push{URL: srv.URL + "/live/x"}}, Call: "5"}}
	p.observe(context.Background(), pending)
	if st := waitStream(t, p, "5"); !errors.Is(st.err, live.ErrPushRefused) {
		t.Fatalf("stream error %v, want ErrPushRefused", st.err)
	}
	if got, _ := p.take(); p.streaming() || len(got) != 0 {
		t.Fatal("a refused stream counts as streaming")
	}
	p.observe(context.Background(), pending)
	time.Sleep(10 * time.Millisecond)
	mu.Lock()
	n := tries
	mu.Unlock()
	if n != 1 {
		t.Fatalf("%d tries of the same refused stream", n)
	}
	// Another attempt of the call (a new address) is tried; a call that
	// no longer runs has its stream dropped.
	pending[0].Push = &live.Push{URL: srv.URL + "/live/y"}
	p.observe(context.Background(), pending)
	p.observe(context.Background(), nil)
	p.mu.Lock()
	left := len(p.streams)
	p.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d streams of calls no longer running", left)
	}
}

// A Describe's snapshot of a call whose push stream already brought a
// later state is that later state: a tool's rolling tail read from the
// heartbeats after the pushed one would look like new output to a
// follower (a user command's bash_execution_update repeated its lines).
// Once the stream ended, a newer heartbeat stands.
func TestPushReader_DescribeNeverOlderThanThePush(t *testing.T) {
	hub, err := live.ListenHub("127.0.0.1:0", live.HubOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	acc := live.NewTool("b1", "call-1", "bash")
	acc.SetOutput("l1\nl2\nl3\nl4")
	push, end := hub.Publish(acc)
	p := newPushReader(&reader{}, nil)
	t0 := time.Now()
	tool := func(out string, at time.Time) []live.Stamped {
		return []live.Stamped{{Snapshot: live.Snapshot{Kind: live.KindTool, EntryID: "b1", Output: out,
			Push: &push}, Call: "bash-1", At: at}}
	}
	p.observe(context.Background(), tool("l1", t0))
	waitStream(t, p, "bash-1")                     // the hub's first line: l1 to l4
	d := tool("l1\nl2\nl3", t0.Add(2*time.Second)) // the heartbeat lags the stream
	p.newest(d)
	if d[0].Output != "l1\nl2\nl3\nl4" || d[0].Push == nil || d[0].At != t0.Add(2*time.Second) {
		t.Fatalf("describe round %+v: want the pushed output with the Describe's push address and time", d[0])
	}
	end() // the stream ends; a later heartbeat is newer than its last line
	deadline := time.Now().Add(2 * time.Second)
	for {
		p.mu.Lock()
		over := p.streams["bash-1"].over
		p.mu.Unlock()
		if over {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stream did not end")
		}
		time.Sleep(time.Millisecond)
	}
	d = tool("l1\nl2\nl3\nl4\nl5", t0.Add(4*time.Second))
	p.newest(d)
	if d[0].Output != "l1\nl2\nl3\nl4\nl5" {
		t.Fatalf("after the stream ended a newer heartbeat was replaced: %q", d[0].Output)
	}
}
