package client

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/live"
)

// rpcs is the fake's Describe and query count.
func (f *fakeTemporal) rpcs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.describes + f.queries
}

// streamFor runs a prompt on f that streams for d (a snapshot every 10
// ms), then ends, and returns its answer.
func streamFor(f *fakeTemporal, d time.Duration) string {
	acc := live.NewModel("a1", 0)
	var text strings.Builder
	for i := 0; time.Duration(i)*10*time.Millisecond < d; i++ {
		piece := fmt.Sprintf("word%d ", i)
		text.WriteString(piece)
		acc.Add(llmDelta(piece))
		f.do(func() { f.runs["r1"].pending = []live.Snapshot{acc.Snapshot()} })
		time.Sleep(10 * time.Millisecond)
	}
	answer := text.String()
	end := agent.Event{Type: agent.EventMessageEnd, Seq: 3, EntryID: "a1",
		Message: &agent.Message{Role: agent.RoleAssistant, Content: []agent.ContentBlock{{Type: agent.BlockText, Text: answer}}}}
	f.do(func() {
		r := f.runs["r1"]
		r.pending = nil
		r.events = append(r.events, end, agent.Event{Type: agent.EventPromptEnd, Seq: 4, Status: agent.StatusCompleted})
	})
	return answer
}

func streamingFake() *fakeTemporal {
	return newFake(&fakeRun{id: "r1", events: []agent.Event{
		{Type: agent.EventAgentStart, Seq: 1},
		{Type: agent.EventMessageStart, Seq: 2, EntryID: "a1"},
	}})
}

// textRecorder keeps a follower's workflow events and its live text.
type textRecorder struct {
	recorder
	text strings.Builder
}

func (r *textRecorder) fn(e agent.Event) {
	r.recorder.fn(e)
	if e.Type == agent.EventMessageUpdate {
		r.mu.Lock()
		r.text.WriteString(e.AssistantMessageEvent.Delta)
		r.mu.Unlock()
	}
}

// followers runs n Follow calls of one prompt on k, each after its
// after (afters[i], or 0) and started join later than the previous one,
// while the prompt streams for d; it returns each one's record and the
// answer.
func followers(t *testing.T, k *Controller, f *fakeTemporal, n int, join, d time.Duration, afters ...int64) ([]*textRecorder, string) {
	t.Helper()
	recs := make([]*textRecorder, n)
	errs := make(chan error, n)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i := range recs {
		recs[i] = &textRecorder{}
		var after int64
		if i < len(afters) {
			after = afters[i]
		}
		wg.Add(1)
		go func(r *textRecorder) {
			defer wg.Done()
			end, err := k.Follow(ctx, "s1", "", after, r.fn)
			if err == nil && end.Type != agent.EventPromptEnd {
				err = fmt.Errorf("ended with %q", end.Type)
			}
			errs <- err
		}(recs[i])
		time.Sleep(join)
	}
	answer := streamFor(f, d)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return recs, answer
}

// Ten followers of one prompt in one process cost Temporal what one
// does: one reader makes the Describes and events queries, fanned out to
// each (issue 26). Unshared, ten would make ten times the RPCs.
func TestFollow_FollowersShareOneReader(t *testing.T) {
	const d = 600 * time.Millisecond
	f1 := streamingFake()
	one, answer1 := followers(t, fastController(f1), f1, 1, 0, d)
	if got := one[0].text.String(); got != answer1 {
		t.Fatalf("one follower's live text %q, want %q", got, answer1)
	}
	f10 := streamingFake()
	ten, answer10 := followers(t, fastController(f10), f10, 10, 0, d)
	for i, r := range ten {
		r.checkSeqs(t, 0, 4)
		if got := r.text.String(); got != answer10 {
			t.Fatalf("follower %d's live text %q, want %q", i, got, answer10)
		}
	}
	rpc1, rpc10 := f1.rpcs(), f10.rpcs()
	t.Logf("RPCs: 1 follower %d, 10 followers %d", rpc1, rpc10)
	if rpc10 > rpc1*3/2+5 {
		t.Fatalf("10 followers made %d Describes and queries, 1 made %d: want the same (one reader)", rpc10, rpc1)
	}
}

// Each follower has its own cursor: one that joins while the call
// streams gets the text so far as one delta, then the rest, and one that
// asks for the events after seq 2 gets those only; all get every byte
// once.
func TestFollow_SharedReaderKeepsEachCursor(t *testing.T) {
	f := streamingFake()
	k := fastController(f)
	recs := make([]*textRecorder, 3)
	errs := make(chan error, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := func(i int, after int64) {
		recs[i] = &textRecorder{}
		go func() {
			_, err := k.Follow(ctx, "s1", "", after, recs[i].fn)
			errs <- err
		}()
	}
	start(0, 0)
	start(1, 2)
	var answer string
	done := make(chan struct{})
	// A 3 s stream and a join at 500 ms: a loaded machine (CI runs many
	// test binaries at once) still has the late follower join mid-call.
	go func() { answer = streamFor(f, 3*time.Second); close(done) }()
	time.Sleep(500 * time.Millisecond)
	if f.rpcs() == 0 {
		t.Fatal("no RPC after 500 ms")
	}
	start(2, 0) // late: the reader has delivered seqs 1 and 2 already
	<-done
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i, r := range recs {
		if got := r.text.String(); got != answer {
			t.Fatalf("follower %d's live text %q, want %q", i, got, answer)
		}
	}
	recs[0].checkSeqs(t, 0, 4)
	recs[1].checkSeqs(t, 2, 4)
	recs[2].checkSeqs(t, 0, 4)
	if n := len(recs[2].live); n >= len(recs[0].live) {
		t.Fatalf("the late follower got %d live events, the first %d: want the text so far in one", n, len(recs[0].live))
	}
}

// The reader stops when its last follower leaves: no RPC after that,
// and a follower that blocks in its fn does not hold up the others.
func TestFollow_SharedReaderStopsWithItsLastFollower(t *testing.T) {
	f := streamingFake()
	k := fastController(f)
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	slowDone := make(chan error, 1)
	go func() {
		_, err := k.Follow(ctx, "s1", "", 0, func(agent.Event) { <-release })
		slowDone <- err
	}()
	fast := &recorder{}
	fastDone := make(chan error, 1)
	go func() {
		_, err := k.Follow(ctx, "s1", "", 0, fast.fn)
		fastDone <- err
	}()
	time.Sleep(100 * time.Millisecond)
	f.do(func() {
		f.runs["r1"].events = append(f.runs["r1"].events, agent.Event{Type: agent.EventPromptEnd, Seq: 3, Status: agent.StatusCompleted})
	})
	select {
	case err := <-fastDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a follower blocked in its fn held up another one")
	}
	fast.checkSeqs(t, 0, 3)
	cancel()
	close(release)
	<-slowDone

	// A running prompt, followed then left.
	f2 := streamingFake()
	k2 := fastController(f2)
	ctx2, cancel2 := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = k2.Follow(ctx2, "s1", "", 0, func(agent.Event) {}) }()
	}
	time.Sleep(100 * time.Millisecond)
	cancel2()
	wg.Wait()
	time.Sleep(50 * time.Millisecond) // an RPC in flight when it left
	n := f2.rpcs()
	time.Sleep(200 * time.Millisecond)
	if m := f2.rpcs(); m != n {
		t.Fatalf("%d RPCs after every follower left", m-n)
	}
	readers.Lock()
	defer readers.Unlock()
	for key := range readers.m {
		if key.k == k2 {
			t.Fatal("the reader is still registered after its last follower left")
		}
	}
}
