package client

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
)

// flakyFollow serves a fixed event log and fails according to a plan: the
// i-th call fails after delivering failAfter[i] events (-1: succeeds).
// Like the events query it re-serves everything after `after`, and on a
// failure may have delivered events the caller already has.
type flakyFollow struct {
	log       []agent.Event
	failAfter []int
	calls     int
	afters    []int64
	err       error
}

func (f *flakyFollow) follow(ctx context.Context, after int64, fn func(agent.Event)) (agent.Event, error) {
	f.afters = append(f.afters, after)
	plan := -1
	if f.calls < len(f.failAfter) {
		plan = f.failAfter[f.calls]
	}
	f.calls++
	// Deliver one event again, as a follower that resumes from a stale
	// seq would; followResuming must drop it.
	start := max(after-1, 0)
	for i, e := range f.log[start:] {
		if plan >= 0 && i == plan {
			return agent.Event{}, f.err
		}
		fn(e)
		if e.Type == agent.EventPromptEnd {
			return e, nil
		}
	}
	return agent.Event{}, f.err
}

func eventLog(n int) []agent.Event {
	log := make([]agent.Event, n)
	for i := range log {
		log[i] = agent.Event{Type: agent.EventAgentStart, Seq: int64(i + 1)}
	}
	log[n-1].Type = agent.EventPromptEnd
	return log
}

// Issue 6: no event is lost or duplicated, in order, across failures of
// the events query; a missing prompt and a failure that lasts give up.
func TestFollowResuming_NoEventLostOrDuplicated(t *testing.T) {
	transient := errors.New("query events: unavailable")
	cases := []struct {
		name      string
		failAfter []int
		err       error
		giveUp    time.Duration
		wantSeqs  int
		wantErr   error
		wantCalls int
	}{
		{"no failure", nil, transient, time.Minute, 8, nil, 1},
		{"fails twice mid-stream", []int{3, 2}, transient, time.Minute, 8, nil, 3},
		{"fails before any event", []int{0, 0, 0}, transient, time.Minute, 8, nil, 4},
		{"prompt does not exist", []int{0}, fmt.Errorf("%w in session s", ErrNoPrompt), time.Minute, 0, ErrNoPrompt, 1},
		{"failure lasts past give-up", []int{2, 0, 0, 0}, transient, 0, 2, transient, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &flakyFollow{log: eventLog(8), failAfter: c.failAfter, err: c.err}
			var got []int64
			end, err := followResuming(context.Background(), f.follow, 0, func(e agent.Event) { got = append(got, e.Seq) },
				c.giveUp, time.Microsecond)
			if !errors.Is(err, c.wantErr) || (c.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, c.wantErr)
			}
			if len(got) != c.wantSeqs {
				t.Errorf("delivered %v, want seqs 1..%d", got, c.wantSeqs)
			}
			for i, s := range got {
				if s != int64(i+1) {
					t.Fatalf("delivered %v: lost, duplicated or out of order", got)
				}
			}
			if c.wantErr == nil && end.Type != agent.EventPromptEnd {
				t.Errorf("end = %+v", end)
			}
			if f.calls != c.wantCalls {
				t.Errorf("follow called %d times (afters %v), want %d", f.calls, f.afters, c.wantCalls)
			}
		})
	}
}

// A cancelled context ends following at once with ctx.Err().
func TestFollowResuming_StopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := &flakyFollow{log: eventLog(4), failAfter: []int{1, 0, 0, 0, 0, 0}, err: errors.New("unavailable")}
	_, err := followResuming(ctx, f.follow, 0, func(agent.Event) { cancel() }, time.Hour, time.Hour)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// docs/spec.md 13.10.7: live events after a resume are delivered, not dropped until the next
// workflow event: the backend's follows share one LiveCursor, so
// a resumed follow sends only the text past what the client has.
func TestFollowResuming_LiveEventsAfterAResumePassThrough(t *testing.T) {
	live := func(delta string) agent.Event {
		return agent.Event{Type: agent.EventMessageUpdate, Seq: 1,
			AssistantMessageEvent: &agent.AssistantMessageEvent{Type: "text_delta", Delta: delta}}
	}
	calls := 0
	follow := func(ctx context.Context, after int64, fn func(agent.Event)) (agent.Event, error) {
		calls++
		if calls == 1 {
			fn(agent.Event{Type: agent.EventMessageStart, Seq: 1})
			fn(live("Hel"))
			return agent.Event{}, errors.New("query events: unavailable")
		}
		fn(live("lo"))
		end := agent.Event{Type: agent.EventPromptEnd, Seq: 2}
		fn(end)
		return end, nil
	}
	var text string
	end, err := followResuming(context.Background(), follow, 0, func(e agent.Event) {
		if IsLive(e) {
			text += e.AssistantMessageEvent.Delta
		}
	}, time.Minute, time.Microsecond)
	if err != nil || end.Type != agent.EventPromptEnd {
		t.Fatalf("end %+v err %v", end, err)
	}
	if text != "Hello" {
		t.Fatalf("live text %q, want %q: a live event after the resume was dropped", text, "Hello")
	}
}
