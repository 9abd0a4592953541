package rpcserver

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/rpc"
)

// idleQueue holds the steer and follow_up messages sent while no prompt
// runs (pi 1.6 queues them too): the next prompt this connection starts
// receives them, steering first, as steer and follow_up signals. While a
// prompt runs, its queue is in its workflow (query queue, update
// edit_queue, event queue_changed); last is the queue_update written
// last, so a change is said once. refresh makes a read of the queue and
// its write one step (refreshQueue, clearQueue, prompt_end): a read
// that began earlier never writes after a later one.
type idleQueue struct {
	msgs    []agent.QueuedMessage
	last    rpc.QueueEvent
	refresh sync.Mutex
}

// queue sends a message into the running prompt as steer or follow_up
// (steer, follow_up, or a prompt with that streamingBehavior), or, with
// none running, holds it for the next prompt; either way the response's
// disposition is "queued" and a queue_update follows.
func (c *conn) queue(ctx context.Context, cmd rpc.Command) {
	kind := agent.SignalFollowUp
	if cmd.Type == rpc.CmdSteer || cmd.StreamingBehavior == rpc.StreamingSteer {
		kind = agent.SignalSteer
	}
	c.call(ctx, cmd, func(ctx context.Context) (any, error) {
		err := c.b.Send(ctx, kind, cmd.Message, cmd.Images...)
		switch {
		case errors.Is(err, client.ErrNoRunningPrompt) && c.activeFollower() == nil:
			c.mu.Lock()
			c.idle.msgs = append(c.idle.msgs, agent.QueuedMessage{Kind: kind, Text: cmd.Message, Images: cmd.Images})
			q := c.idle.msgs
			c.mu.Unlock()
			c.queueChanged(q)
		case err != nil:
			return nil, err
		default:
			c.refreshQueue(ctx)
		}
		return rpc.PromptData{Disposition: rpc.DispositionQueued}, nil
	})
}

// queueChanged writes queue_update for q unless it was the last written.
func (c *conn) queueChanged(q []agent.QueuedMessage) {
	steering, followUp := agent.QueueTexts(q)
	ev := rpc.QueueEvent{Type: rpc.EventQueueUpdate, QueueData: rpc.QueueData{Steering: steering, FollowUp: followUp}}
	c.mu.Lock()
	same := slices.Equal(c.idle.last.Steering, steering) && slices.Equal(c.idle.last.FollowUp, followUp)
	c.idle.last = ev
	c.mu.Unlock()
	if !same {
		_ = c.out.write(ev)
	}
}

// refreshQueue reads the running prompt's queue and says when it
// changed; a prompt that ended has none left (it handed them back).
func (c *conn) refreshQueue(ctx context.Context) {
	c.idle.refresh.Lock()
	defer c.idle.refresh.Unlock()
	ctx, cancel := context.WithTimeout(ctx, c.s.timeout())
	defer cancel()
	q, err := c.b.Queue(ctx)
	if err != nil {
		c.s.logf("rpc: queue of the running prompt: %s", line.First(err.Error()))
		return
	}
	c.queueChanged(q)
}

// deliverQueue sends the messages held while idle into the prompt just
// started. A message the prompt refuses is logged (it is not lost: the
// log names it) and the rest are still sent.
func (c *conn) deliverQueue(ctx context.Context) {
	c.mu.Lock()
	q := c.idle.msgs
	c.idle.msgs = nil
	c.mu.Unlock()
	if len(q) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, c.s.timeout())
	defer cancel()
	slices.SortStableFunc(q, func(a, b agent.QueuedMessage) int { return strings.Compare(a.Kind, b.Kind) }) // steer first
	for _, m := range q {
		if err := c.b.Send(ctx, m.Kind, m.Text, m.Images...); err != nil {
			c.s.logf("rpc: queued %s message not delivered: %s: %q", m.Kind, line.First(err.Error()), m.Text)
		}
	}
	c.refreshQueue(ctx)
}

// clearQueue is clear_queue: it empties the queue, the running prompt's
// (update edit_queue) or the one held while idle, and returns its texts.
func (c *conn) clearQueue(ctx context.Context, _ rpc.Command) (any, error) {
	c.idle.refresh.Lock()
	defer c.idle.refresh.Unlock()
	c.mu.Lock()
	removed := c.idle.msgs
	c.idle.msgs = nil
	c.mu.Unlock()
	if c.activeFollower() != nil {
		res, err := c.b.EditQueue(ctx, agent.EditQueuePayload{Action: agent.QueueClear})
		if err != nil && !errors.Is(err, client.ErrNoRunningPrompt) {
			return nil, err
		}
		removed = append(removed, res.Removed...)
	}
	c.queueChanged(nil)
	steering, followUp := agent.QueueTexts(removed)
	return rpc.QueueData{Steering: steering, FollowUp: followUp}, nil
}

// queueAfter says what an event of the followed prompt did to the
// queue: queue_changed (a message queued, edited, removed or delivered,
// by this connection or any other client) makes it read the workflow's
// queue again; prompt_end handed the rest back, leaving the messages
// queued here since.
func (c *conn) queueAfter(ctx context.Context, e agent.Event) {
	switch e.Type {
	case agent.EventPromptEnd:
		c.idle.refresh.Lock()
		defer c.idle.refresh.Unlock()
		c.mu.Lock()
		idle := c.idle.msgs
		c.mu.Unlock()
		c.queueChanged(idle)
	case agent.EventQueueChanged:
		c.refreshQueue(ctx)
	}
}

// watchInterval is how often a connection that follows no prompt looks
// for one running in its session.
const watchInterval = 2 * time.Second

// watchQueue makes every change to the queue of a prompt this connection
// does not follow (another client's, started while it is idle) reach it
// as queue_update, as pi sends one whether a prompt runs or not: every
// watchInterval it looks for such a prompt (watchRun).
func (c *conn) watchQueue() {
	defer c.wg.Done()
	for {
		select {
		case <-c.bg.Done():
			return
		case <-time.After(watchInterval):
			c.watchRun()
		}
	}
}

// watchRun watches the session's running prompt unless this connection
// follows it (conn.follow reports that queue): it says its queue, then
// follows its queue_changed and prompt_end (queueAfter) until it ends or
// detach stops it. queueChanged says nothing twice.
func (c *conn) watchRun() {
	sid := c.b.SessionID()
	ctx, cancel := context.WithCancel(c.bg)
	defer cancel()
	qctx, qcancel := context.WithTimeout(ctx, c.s.timeout())
	defer qcancel()
	run, ok, err := c.b.LatestPrompt(qctx)
	if err != nil || !ok || !run.Running || c.activeFollower() != nil {
		return
	}
	st, err := c.b.State(qctx)
	if err != nil || st.Status != agent.StatusRunning {
		return
	}
	c.mu.Lock()
	c.stopWatch = cancel
	c.mu.Unlock()
	c.refreshQueue(ctx)
	_, _ = c.b.Follow(ctx, run.RunID, st.LastSeq, func(e agent.Event) {
		if !live.IsLive(e) && c.activeFollower() == nil && c.b.SessionID() == sid {
			c.queueAfter(ctx, e)
		}
	})
}
