package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/retry"
)

// AbortResult is the latency from abort_retry sent to the client seeing
// auto_retry_end{finalError: "Retry cancelled"}.
type AbortResult struct {
	Latency   Dist  `json:"latency"`
	BackoffMs int64 `json:"backoffMs"`
	PollMs    int64 `json:"pollMs"`
}

// abortPoll is how often the client polls the events query (the
// follower's fixed poll).
const abortPoll = 100 * time.Millisecond

type seenEvent struct {
	ev agent.Event
	at time.Time
}

// abort starts prompts whose first model call fails, waits until the
// client sees auto_retry_start, lets the backoff run a little (a different
// amount each run, so the abort lands at different points of the wait),
// sends abort_retry and times until the client sees the chain's end.
func (h *harness) abort(ctx context.Context) (*AbortResult, error) {
	s := h.scenario("abort")
	s.Retry.BaseDelayMs = h.cfg.AbortBackoffMs
	w, err := startChild(ctx, s)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	k := h.controller(s)
	var lat []float64
	for i := 0; i < h.cfg.AbortRuns; i++ {
		sess := fmt.Sprintf("abort-%d", i)
		run, err := h.startPrompt(ctx, s, sess, overheadMessage, e503)
		if err != nil {
			return nil, err
		}
		fctx, cancel := context.WithTimeout(ctx, time.Duration(h.cfg.AbortBackoffMs)*time.Millisecond+time.Minute)
		seen := make(chan seenEvent, 64)
		go func() {
			defer close(seen)
			_, _ = k.Follow(fctx, sess, run.GetRunID(), 0, func(ev agent.Event) { seen <- seenEvent{ev, time.Now()} })
		}()
		d, err := timeAbort(fctx, seen, time.Duration(i%5)*100*time.Millisecond, func() error {
			return k.AbortRetry(fctx, sess)
		})
		cancel()
		for range seen { // let the follower finish
		}
		if err != nil {
			return nil, fmt.Errorf("abort run %d: %w", i, err)
		}
		if err := promptDone(ctx, run, agent.StatusFailed); err != nil {
			return nil, err
		}
		lat = append(lat, ms(d))
	}
	h.logf("abort: %d runs", len(lat))
	return &AbortResult{Latency: dist(lat), BackoffMs: h.cfg.AbortBackoffMs, PollMs: abortPoll.Milliseconds()}, nil
}

// timeAbort waits for auto_retry_start on seen, waits `into` more, calls
// send and returns the time until auto_retry_end{Retry cancelled} is seen.
func timeAbort(ctx context.Context, seen <-chan seenEvent, into time.Duration, send func() error) (time.Duration, error) {
	if err := waitFor(ctx, seen, func(ev agent.Event) bool { return ev.Type == agent.EventAutoRetryStart }); err != nil {
		return 0, err
	}
	select {
	case <-time.After(into):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	t0 := time.Now()
	if err := send(); err != nil {
		return 0, err
	}
	var end seenEvent
	err := waitForSeen(ctx, seen, func(se seenEvent) bool {
		if se.ev.Type != agent.EventAutoRetryEnd {
			return false
		}
		end = se
		return true
	})
	if err != nil {
		return 0, err
	}
	if end.ev.Success || end.ev.FinalError != retry.CancelledMessage {
		return 0, fmt.Errorf("auto_retry_end %+v, want finalError %q", end.ev, retry.CancelledMessage)
	}
	return end.at.Sub(t0), nil
}

func waitFor(ctx context.Context, seen <-chan seenEvent, match func(agent.Event) bool) error {
	return waitForSeen(ctx, seen, func(se seenEvent) bool { return match(se.ev) })
}

func waitForSeen(ctx context.Context, seen <-chan seenEvent, match func(seenEvent) bool) error {
	for {
		select {
		case se, ok := <-seen:
			if !ok {
				return errors.New("the event stream ended first")
			}
			if match(se) {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// TimerResult is how much longer than configured the retry backoffs
// lasted, in three nested views.
type TimerResult struct {
	// Resume is, per backoff, the time from TimerStarted to the first
	// WorkflowTaskStarted after TimerFired, minus the delay: how much
	// longer the workflow actually waited (server timer plus dispatching
	// the workflow task that resumes it). The target applies to it.
	Resume Dist `json:"resume"`
	// Fire is TimerFired minus TimerStarted minus the delay: the server's
	// timer alone.
	Fire Dist `json:"fire"`
	// Announced is the time from auto_retry_start to the next agent_start
	// (workflow time, as the events query shows them) minus the delay: it
	// adds the workflow task that decided the retry and started the timer.
	Announced Dist   `json:"announced"`
	Delays    string `json:"delays"`
}

// timer runs prompts whose first model calls fail (so they back off
// base, 2·base, ...), then reads each backoff's real length from the
// events and from the history.
func (h *harness) timer(ctx context.Context) (*TimerResult, error) {
	s := h.scenario("timer")
	s.Retry.BaseDelayMs = h.cfg.TimerBaseDelayMs
	w, err := startChild(ctx, s)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	faults := make([]string, h.cfg.TimerFaults)
	for i := range faults {
		faults[i] = e503
	}
	var announced, resume, fire []float64
	for i := 0; i < h.cfg.TimerRuns; i++ {
		sess := fmt.Sprintf("timer-%d", i)
		run, err := h.startPrompt(ctx, s, sess, overheadMessage, faults...)
		if err != nil {
			return nil, err
		}
		if err := promptDone(ctx, run, agent.StatusCompleted); err != nil {
			return nil, err
		}
		evs, err := h.events(ctx, s, sess, run.GetRunID())
		if err != nil {
			return nil, err
		}
		r, err := resumeLateness(evs)
		if err != nil {
			return nil, fmt.Errorf("timer run %d: %w", i, err)
		}
		announced = append(announced, r...)
		hist, err := h.history(ctx, run)
		if err != nil {
			return nil, err
		}
		f, w := timerLateness(hist)
		if len(f) != len(r) || len(w) != len(r) {
			return nil, fmt.Errorf("timer run %d: %d fired timers and %d resumptions for %d auto_retry_start events", i, len(f), len(w), len(r))
		}
		fire, resume = append(fire, f...), append(resume, w...)
	}
	h.logf("timer: %d backoffs", len(resume))
	delays := ""
	for i := 0; i < h.cfg.TimerFaults; i++ {
		if i > 0 {
			delays += ", "
		}
		delays += fmt.Sprintf("%d ms", h.cfg.TimerBaseDelayMs<<i)
	}
	return &TimerResult{Resume: dist(resume), Fire: dist(fire), Announced: dist(announced), Delays: delays}, nil
}

// timerLateness reads every fired timer of a history: how late it fired,
// and how late the workflow task after it started (both against the
// timer's start plus its delay).
func timerLateness(hist []*historypb.HistoryEvent) (fire, resume []float64) {
	type timer struct {
		start time.Time
		delay time.Duration
	}
	started := map[int64]timer{}
	var waiting *timer // fired, until the next workflow task starts
	for _, ev := range hist {
		at := ev.GetEventTime().AsTime()
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			started[ev.GetEventId()] = timer{at, ev.GetTimerStartedEventAttributes().GetStartToFireTimeout().AsDuration()}
		case enumspb.EVENT_TYPE_TIMER_FIRED:
			t := started[ev.GetTimerFiredEventAttributes().GetStartedEventId()]
			fire = append(fire, ms(at.Sub(t.start)-t.delay))
			waiting = &t
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			if waiting != nil {
				resume = append(resume, ms(at.Sub(waiting.start)-waiting.delay))
				waiting = nil
			}
		}
	}
	return fire, resume
}

// resumeLateness pairs every auto_retry_start with the next agent_start.
func resumeLateness(evs []agent.Event) ([]float64, error) {
	var out []float64
	for i, ev := range evs {
		if ev.Type != agent.EventAutoRetryStart {
			continue
		}
		found := false
		for _, next := range evs[i+1:] {
			if next.Type == agent.EventAgentStart {
				late := next.Time.Sub(ev.Time) - time.Duration(ev.DelayMs)*time.Millisecond
				out = append(out, ms(late))
				found = true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("auto_retry_start seq %d has no following agent_start", ev.Seq)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no auto_retry_start in the events")
	}
	return out, nil
}
