package integration

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
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
// events do not all fit, the follower reads the earlier ones with the
// events query, page by page, and the rest from the result; every event
// once, in order. With no worker, the events the result holds are still
// read at once. Spec 13.11.8.
func TestIntegration_FinishedPromptPagesPastItsResult(t *testing.T) {
	e := newEnv(t)
	e.s.Scripted.StreamDelayMs = 0
	e.startWorker()
	in := app.PromptInput(e.s, "big", "answer, then read the follow-ups")
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
	followClosed(t, e, "big", want, 0) // the query pages, the result ends
	e.stopWorker()
	followClosed(t, e, "big", want, first-1)
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
