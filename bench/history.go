package main

import (
	"context"
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
)

// HistoryPoint is the Temporal history cost of the prompt that brings the
// conversation to Messages messages.
type HistoryPoint struct {
	Messages     int `json:"messages"`
	Events       int `json:"events"`
	Bytes        int `json:"bytes"`
	ModelCalls   int `json:"modelCalls"`
	BytesPerCall int `json:"bytesPerCall"`
}

// HistoryResult is the history cost per model call as a conversation
// grows.
type HistoryResult struct {
	MessageBytes int            `json:"messageBytes"`
	Points       []HistoryPoint `json:"points"`
	// Ratio is the last point's BytesPerCall over the first's.
	Ratio float64 `json:"ratio"`
}

// filler makes n bytes of text that differs by seed (so no layer can
// deduplicate it).
func filler(n int, seed string) string {
	var b strings.Builder
	for b.Len() < n {
		fmt.Fprintf(&b, "%s: the quick brown fox jumps over the lazy dog %d. ", seed, b.Len())
	}
	return b.String()[:n]
}

// historyGrowth grows one session by prompts of a MessageBytes user message
// answered by a MessageBytes reply (the worker's scripted.reply), and
// measures each checkpoint's prompt history. Compaction is off so every
// prompt makes exactly one model call and the context only grows.
func (h *harness) historyGrowth(ctx context.Context) (*HistoryResult, error) {
	s := h.scenario("history")
	s.Scripted.Reply = filler(h.cfg.MessageBytes, "reply")
	s.Compaction.Enabled = false
	w, err := startChild(ctx, s)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	checkpoints := map[int]bool{}
	last := 0
	for _, c := range h.cfg.HistoryCheckpoints {
		checkpoints[c] = true
		last = max(last, c)
	}
	res := &HistoryResult{MessageBytes: h.cfg.MessageBytes}
	for p := 1; 2*p <= last; p++ {
		run, err := h.startPrompt(ctx, s, "history", filler(h.cfg.MessageBytes, fmt.Sprintf("user %d", p)))
		if err != nil {
			return nil, err
		}
		if err := promptDone(ctx, run, agent.StatusCompleted); err != nil {
			return nil, err
		}
		msgs := 2 * p
		if !checkpoints[msgs] {
			continue
		}
		evs, err := h.history(ctx, run)
		if err != nil {
			return nil, err
		}
		pt := HistoryPoint{Messages: msgs, Events: len(evs), Bytes: historyBytes(evs)}
		for _, ev := range evs {
			if ev.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
				ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == activities.CallModelName {
				pt.ModelCalls++
			}
		}
		if pt.ModelCalls == 0 {
			return nil, fmt.Errorf("history of %s has no %s activity", run.GetID(), activities.CallModelName)
		}
		pt.BytesPerCall = pt.Bytes / pt.ModelCalls
		res.Points = append(res.Points, pt)
		h.logf("history: %d messages, %d bytes per model call", msgs, pt.BytesPerCall)
	}
	if n := len(res.Points); n > 0 {
		res.Ratio = float64(res.Points[n-1].BytesPerCall) / float64(res.Points[0].BytesPerCall)
	}
	return res, nil
}
