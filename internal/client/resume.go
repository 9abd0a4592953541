package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/durableagent/durableagent/agent"
)

// DefaultFollowGiveUp is how long following a prompt survives a failing
// events query (a worker restarting, Temporal briefly unreachable) before
// it gives up. The prompt itself is durable; only the stream stops.
const DefaultFollowGiveUp = 2 * time.Minute

// followRetryPause is the wait between two attempts to resume following.
const followRetryPause = 500 * time.Millisecond

// followFunc follows a prompt's events after a seq (Controller.Follow
// bound to one run).
type followFunc func(ctx context.Context, after int64, fn func(agent.Event)) (agent.Event, error)

// followResuming runs follow and, when it fails, runs it again from the
// last seq delivered, so fn sees every event once and in order across
// failures. It gives up on a permanent failure (the prompt does not exist,
// or closed without prompt_end) and when failures last giveUp without an
// event delivered in between.
//
// Controller.Follow already waits through a missing worker and
// short Temporal outages; this only resumes after it gave up on Temporal.
// Live events (IsLive) always pass through: follow must resume
// the live output where the client has it (Session.Follow shares
// one LiveCursor across its follows), not from the start of the
// running call.
func followResuming(ctx context.Context, follow followFunc, after int64, fn func(agent.Event), giveUp, pause time.Duration) (agent.Event, error) {
	var failingSince time.Time
	for {
		progressed := false
		end, err := follow(ctx, after, func(e agent.Event) {
			if IsLive(e) {
				fn(e)
				return
			}
			if e.Seq <= after {
				return
			}
			after, progressed = e.Seq, true
			fn(e)
		})
		switch {
		case err == nil:
			return end, nil
		case ctx.Err() != nil:
			return agent.Event{}, ctx.Err()
		case errors.Is(err, ErrNoPrompt), errors.Is(err, ErrPromptClosed):
			return agent.Event{}, err
		}
		if progressed || failingSince.IsZero() {
			failingSince = time.Now()
		}
		if time.Since(failingSince) >= giveUp {
			return agent.Event{}, fmt.Errorf("events query failing for %s: %w", giveUp.Round(time.Millisecond), err)
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return agent.Event{}, ctx.Err()
		case <-t.C:
		}
	}
}
