package integration

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/live"
)

// A finished prompt's events are readable with no worker (issue 21): the
// follower reads a closed run's last events from its result, never with a
// query a closed workflow answers only through a worker (the ~51 s stall
// of bench/RESULTS.md). Every worker is stopped after the prompt ends;
// following from the start, from within and past the end each returns at
// once, with the events the events query gave while the worker ran.
// Spec 13.11.8.
func TestIntegration_FinishedPromptReadableWithoutWorker(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	run := e.prompt("finished", e503)
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("result %+v %v", res, err)
	}
	want := e.events("finished")
	e.stopWorker()
	last := want[len(want)-1]
	followClosed(t, e, "finished", want, 0, last.Seq-2, last.Seq)
	// `starter events` without --follow reads them from the result too.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := e.k.Events(ctx, "finished", "", 0)
	if err != nil || typesOf(got) != typesOf(want) {
		t.Fatalf("events of the finished prompt with no worker: %v (%s), want %s", err, typesOf(got), typesOf(want))
	}
}

// The result's events are bounded (one events page): when a prompt's
// events do not all fit, a finished prompt is still read from its result
// alone (issue 38: one way), with or without a worker: the follower gets
// the result's events, every one once and in order, and not the earlier
// ones (docs/live.md). Spec 13.11.8.
func TestIntegration_FinishedPromptReadsOnlyItsResultPage(t *testing.T) {
	e := newEnv(t)
	e.s.Scripted.StreamDelayMs = 0
	e.startWorker()
	in := client.PromptInput(e.s, "big", "answer, then read the follow-ups")
	in.Model.Faults = []string{"hang:2s"}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 { // each one's message_start and message_end: 2 x 64 KiB
		if err := e.k.FollowUp(context.Background(), "big", plainMessage(100<<10)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.result(run)
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("result %+v %v", res.Status, err)
	}
	want := e.events("big")
	first := res.LastEvents[0].Seq
	if first <= 1 || res.LastEvents[len(res.LastEvents)-1].Seq != want[len(want)-1].Seq {
		t.Fatalf("result events %d..%d of %d: want a bounded tail", first, res.LastEvents[len(res.LastEvents)-1].Seq, len(want))
	}
	size := 1
	for _, ev := range res.LastEvents {
		size += agent.EncodedSize(ev) + 1
	}
	if size > agent.EventsPageBytes {
		t.Fatalf("result events of %d bytes, bound %d", size, agent.EventsPageBytes)
	}
	tail := want[len(want)-len(res.LastEvents):]
	followClosed(t, e, "big", tail, 0) // a worker runs: still no events query
	e.stopWorker()
	followClosed(t, e, "big", tail, 0, first-1)
}

// followClosed follows a closed prompt from each after and wants the
// events of want past it, within five seconds.
func followClosed(t *testing.T, e *env, session string, want []agent.Event, afters ...int64) {
	t.Helper()
	last := want[len(want)-1]
	for _, after := range afters {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		start := time.Now()
		var got []agent.Event
		end, err := e.k.Follow(ctx, session, "", after, func(ev agent.Event) { got = append(got, ev) })
		cancel()
		if err != nil {
			t.Fatalf("follow after %d with no worker: %v (after %v)", after, err, time.Since(start))
		}
		if end.Type != agent.EventPromptEnd || end.Seq != last.Seq {
			t.Fatalf("follow after %d: end %+v, want prompt_end seq %d", after, end, last.Seq)
		}
		wantAfter := []agent.Event{}
		for _, ev := range want {
			if ev.Seq > after {
				wantAfter = append(wantAfter, ev)
			}
		}
		if len(got) == 0 {
			got = []agent.Event{}
		}
		if !reflect.DeepEqual(got, wantAfter) {
			t.Fatalf("follow after %d: got %s\nwant %s", after, typesOf(got), typesOf(wantAfter))
		}
	}
}

// countingClient counts the RPCs a follower makes (the client is the real
// one, on the embedded server).
type countingClient struct {
	sdkclient.Client
	describes, queries atomic.Int64
}

func (c *countingClient) DescribeWorkflowExecution(ctx context.Context, id, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	c.describes.Add(1)
	return c.Client.DescribeWorkflowExecution(ctx, id, runID)
}

func (c *countingClient) QueryWorkflow(ctx context.Context, id, runID, query string, args ...any) (converter.EncodedValue, error) {
	c.queries.Add(1)
	return c.Client.QueryWorkflow(ctx, id, runID, query, args...)
}

// liveFollow follows session with n Follow calls of one controller (on a
// counting client) and returns what each got: its workflow event types
// and its live text.
func liveFollow(t *testing.T, e *env, session string, n int) (*countingClient, []string, []string) {
	t.Helper()
	cc := &countingClient{Client: e.c}
	k := &client.Controller{Client: cc, TaskQueue: e.s.Temporal.TaskQueue}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	types, texts := make([]string, n), make([]string, n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			var evs []agent.Event
			var text strings.Builder
			_, err := k.Follow(ctx, session, "", 0, func(ev agent.Event) {
				if ev.Type == agent.EventMessageUpdate && ev.AssistantMessageEvent.Type == agent.DeltaText {
					text.WriteString(ev.AssistantMessageEvent.Delta)
				} else if !live.IsLive(ev) {
					evs = append(evs, ev)
				}
			})
			types[i], texts[i] = typesOf(evs), text.String()
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("follow %s: %v", session, err)
		}
	}
	return cc, types, texts
}

// Followers of one prompt in one process share one reader (issue 26):
// five Follow calls of a streaming prompt each get every event and the
// whole answer as live text, for the Describes and events queries one
// follower makes following the same prompt alone.
func TestIntegration_LiveFollowersShareOneReader(t *testing.T) {
	e := newEnv(t)
	answer := strings.TrimSpace(strings.Repeat("streamed word ", 80))
	e.s.Scripted.Reply = answer
	e.s.Scripted.StreamDelayMs = 20 // 160 words: ~3 s of streaming
	e.startWorker()
	counts := map[int]int64{}
	for _, n := range []int{1, 5} {
		session := fmt.Sprintf("shared-%d", n)
		e.prompt(session)
		cc, types, texts := liveFollow(t, e, session, n)
		for i := range n {
			if types[i] != types[0] || !strings.HasSuffix(types[i], agent.EventPromptEnd) {
				t.Fatalf("follower %d of %d got %s, follower 0 %s", i, n, types[i], types[0])
			}
			if texts[i] != answer {
				t.Fatalf("follower %d of %d: live text %q, want the answer %q", i, n, texts[i], answer)
			}
		}
		counts[n] = cc.describes.Load() + cc.queries.Load()
	}
	t.Logf("Describes and queries: 1 follower %d, 5 followers %d", counts[1], counts[5])
	if counts[5] > counts[1]*3/2 {
		t.Fatalf("5 followers made %d Describes and queries, 1 follower %d: want about the same (one reader)", counts[5], counts[1])
	}
}

// A follower of an ended prompt gets its events with no worker running
// (issue 26), from its result alone (issue 38): the last page of them,
// PromptResult.LastEvents, when they are more than it holds (the earlier
// ones are not read: docs/live.md). No events query is made, which only a
// worker answers; two followers share the reads. `starter events`
// (Controller.Events) reads them so too.
func TestIntegration_LiveEndedPromptNeedsNoWorker(t *testing.T) {
	e := newEnv(t)
	e.s.Scripted.StreamDelayMs = 0
	e.startWorker()
	in := client.PromptInput(e.s, "ended", "answer, then read the follow-ups")
	in.Model.Faults = []string{"hang:2s"}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	for range 4 { // more events than one page: the result holds the last ones only
		if err := e.k.FollowUp(context.Background(), "ended", plainMessage(100<<10)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.result(run)
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("result %+v %v", res.Status, err)
	}
	if res.LastEvents[0].Seq <= 1 {
		t.Fatalf("the result holds every event (from seq %d): the test needs more", res.LastEvents[0].Seq)
	}
	var want []agent.Event
	for _, ev := range e.events("ended") {
		if ev.Seq >= res.LastEvents[0].Seq {
			want = append(want, ev)
		}
	}
	e.stopWorker()
	start := time.Now()
	cc, types, _ := liveFollow(t, e, "ended", 2)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("following the ended prompt took %s with no worker", took)
	}
	for i, got := range types {
		if got != typesOf(want) {
			t.Fatalf("follower %d got %s\nwant %s", i, got, typesOf(want))
		}
	}
	if q := cc.queries.Load(); q != 0 {
		t.Fatalf("%d events queries for an ended prompt: want none (no worker answers them)", q)
	}
	// `starter events` without --follow reads them the same way.
	ec := &countingClient{Client: e.c}
	k := &client.Controller{Client: ec, TaskQueue: e.s.Temporal.TaskQueue}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := k.Events(ctx, "ended", "", 0)
	if err != nil || typesOf(got) != typesOf(want) || ec.queries.Load() != 0 {
		t.Fatalf("events of the ended prompt with no worker: %v, %d queries (%s), want %s", err, ec.queries.Load(), typesOf(got), typesOf(want))
	}
}
