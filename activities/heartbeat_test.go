package activities

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/session"
)

// beatLog records the heartbeats of startHeartbeat.
type beatLog struct {
	mu    sync.Mutex
	snaps []live.Snapshot
}

func (l *beatLog) record(_ context.Context, details ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.snaps = append(l.snaps, details[0].(live.Snapshot))
}

func (l *beatLog) get() (int, live.Snapshot) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.snaps), l.snaps[len(l.snaps)-1]
}

func (l *beatLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.snaps)
}

// A stream is not recorded during its first interval (a call that ends
// within it costs the server no heartbeat), then at the interval's end,
// then as soon as it changes, not on the next tick: a change is recorded
// within the record gap, a burst of changes costs a record or two, and
// nothing changing costs nothing until the interval.
func TestHeartbeat_RecordsAStreamWhenItChanges(t *testing.T) {
	log := &beatLog{}
	a := &Activities{HeartbeatInterval: 300 * time.Millisecond, recordHeartbeat: log.record}
	acc := live.NewModel("a1", 0)
	h := a.startHeartbeat(context.Background(), acc)
	defer h.stop()

	acc.Add(llm.Delta{Type: agent.DeltaText, Delta: "Hi"})
	time.Sleep(150 * time.Millisecond)
	if n := log.count(); n != 0 {
		t.Fatalf("%d records in the first 150 ms of a 300 ms interval, want none", n)
	}
	time.Sleep(250 * time.Millisecond)
	if n, last := log.get(); n != 1 || last.Blocks[0].Tail != "Hi" {
		t.Fatalf("after the first interval: %d records, last %+v; want the snapshot so far", n, last)
	}
	acc.Add(llm.Delta{Type: agent.DeltaText, Delta: "Hello"})
	time.Sleep(40 * time.Millisecond)
	n, last := log.get()
	if n != 2 || len(last.Blocks) != 1 || last.Blocks[0].Tail != "HiHello" {
		t.Fatalf("40 ms after a change: %d records, last %+v; want it recorded", n, last)
	}
	for range 100 {
		acc.Add(llm.Delta{Type: agent.DeltaText, Delta: "."})
	}
	time.Sleep(120 * time.Millisecond)
	n2, last := log.get()
	if n2-n > 3 || last.Blocks[0].Tail != "HiHello"+strings.Repeat(".", 100) {
		t.Fatalf("a burst of 100 changes: %d more records, last tail %q", n2-n, last.Blocks[0].Tail)
	}
}

// Other details are recorded on a ticker at the interval.
func TestHeartbeat_TicksOtherDetails(t *testing.T) {
	var mu sync.Mutex
	var got []any
	a := &Activities{HeartbeatInterval: 50 * time.Millisecond, recordHeartbeat: func(_ context.Context, d ...any) {
		mu.Lock()
		got = append(got, d[0])
		mu.Unlock()
	}}
	h := a.startHeartbeat(context.Background(), "summarizing")
	time.Sleep(280 * time.Millisecond)
	h.stop()
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 3 || len(got) > 6 || got[len(got)-1] != "summarizing" {
		t.Fatalf("%d beats in 280 ms at 50 ms (%v), want about 5 (none before the first tick)", len(got), got)
	}
}

// CallModel's heartbeat details are the answer so far: its entry id, the
// attempt (model calls already made this turn), the text block growing
// word by word, and the output tokens (estimated: the scripted model
// reports none while it streams).
func TestCallModel_HeartbeatDetailsCarryTheSnapshot(t *testing.T) {
	const reply = "alpha beta gamma delta epsilon zeta eta theta"
	f := newFixture(t, scripted.New(scripted.Options{Reply: reply, StreamDelay: 25 * time.Millisecond}))
	failed := llm.ErrorMessage(llm.Request{Provider: "scripted", Model: "scripted-1"}, "503 Service Unavailable")
	if _, err := f.store.Append("s1", session.Entry{Type: session.TypeMessage, ID: "e0", ParentID: "u1",
		Timestamp: time.Now(), Message: &failed}); err != nil {
		t.Fatal(err)
	}
	// The test environment applies its own 30 s heartbeat throttle, so
	// its heartbeat listener sees only the first beat: record them at
	// the activity instead (the seam activity.RecordHeartbeat fills in).
	log := &beatLog{}
	f.acts.recordHeartbeat = log.record
	res, err := f.call(t, input("a1"))
	if err != nil || res.Text != reply {
		t.Fatalf("call: %+v, %v", res, err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	snaps := log.snaps
	lengths := map[int]bool{}
	prev := 0
	for i, s := range snaps {
		if s.Kind != live.KindModel || s.EntryID != "a1" || s.Attempt != 1 {
			t.Fatalf("snapshot %d: %+v, want model a1 attempt 1", i, s)
		}
		if len(s.Blocks) == 0 {
			continue
		}
		b := s.Blocks[0]
		if len(s.Blocks) != 1 || b.Index != 0 || b.Type != agent.BlockText || b.Offset != 0 || !strings.HasPrefix(reply, b.Tail) {
			t.Fatalf("snapshot %d blocks %+v, want one text block, a prefix of the reply", i, s.Blocks)
		}
		if len(b.Tail) < prev {
			t.Fatalf("snapshot %d: text shrank from %d to %d bytes", i, prev, len(b.Tail))
		}
		if s.OutputTokens != live.EstimateTokens(len(b.Tail)) {
			t.Fatalf("snapshot %d: %d output tokens for %d bytes", i, s.OutputTokens, len(b.Tail))
		}
		prev = len(b.Tail)
		lengths[prev] = true
	}
	if len(lengths) < 3 {
		t.Fatalf("heartbeats showed %d distinct texts of an 8-word answer streamed at 25 ms a word, want >= 3", len(lengths))
	}
	b, _ := json.Marshal(snaps[len(snaps)-1])
	if !strings.Contains(string(b), `"entryId":"a1"`) {
		t.Fatalf("json %s", b)
	}
}

// A call whose output is pushed (Activities.Push) heartbeats a fifth as
// often, and its details name the push stream, from which a follower
// gets the output as it changes.
func TestHeartbeat_PushedCallBeatsSlowerAndNamesItsStream(t *testing.T) {
	hub, err := live.ListenHub("127.0.0.1:0", live.HubOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	log := &beatLog{}
	a := &Activities{HeartbeatInterval: 50 * time.Millisecond, recordHeartbeat: log.record, Push: hub}
	acc := live.NewModel("a1", 0)
	h := a.startHeartbeat(context.Background(), acc)
	acc.Add(llm.Delta{Type: agent.DeltaText, Delta: "Hi"})
	time.Sleep(100 * time.Millisecond)
	n, first := log.get()
	if n != 1 || first.Push == nil || !strings.HasPrefix(first.Push.URL, hub.URL()) {
		t.Fatalf("after the first interval: %d records, push %+v", n, first.Push)
	}
	got := make(chan string, 1)
	go func() {
		var text string
		_ = live.Subscribe(context.Background(), *first.Push, nil, func(s live.Snapshot, _ time.Time) {
			if len(s.Blocks) > 0 {
				text = s.Blocks[0].Tail
			}
		})
		got <- text
	}()
	for _, w := range []string{" there", ", pushed"} {
		time.Sleep(20 * time.Millisecond)
		acc.Add(llm.Delta{Type: agent.DeltaText, Delta: w})
	}
	time.Sleep(500 * time.Millisecond)
	// Unpushed, 50 ms beats and three changes make ~12 records in 600 ms.
	if n := log.count(); n > 2 {
		t.Fatalf("%d records in 600 ms of a pushed call, want at most 2 (one a second)", n)
	}
	h.stop() // the call ended: its stream ends
	select {
	case text := <-got:
		if text != "Hi there, pushed" {
			t.Fatalf("the push stream brought %q", text)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the push stream did not end with the call")
	}
}
