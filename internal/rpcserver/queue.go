package rpcserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/rpc"
)

// idleQueue holds the steer and follow_up messages sent while no prompt
// runs (pi 1.6 queues them too): the next prompt this connection starts
// receives them, steering first, as steer and follow_up signals.
type idleQueue struct {
	steering, followUp []string
}

func (q idleQueue) len() int { return len(q.steering) + len(q.followUp) }

// queue sends a message into the running prompt as steer or follow_up,
// or, with none running, holds it for the next prompt; either way the
// response's disposition is "queued".
func (c *conn) queue(ctx context.Context, cmd command, steer bool) {
	if len(cmd.images) > 0 {
		c.fail(cmd.id, cmd.typ, "images are not supported in a queued message (steer, follow_up, or a prompt with streamingBehavior): send them with a prompt of their own")
		return
	}
	c.call(ctx, cmd, func(ctx context.Context) (any, error) {
		var err error
		if steer {
			err = c.b.Steer(ctx, cmd.str["message"])
		} else {
			err = c.b.FollowUp(ctx, cmd.str["message"])
		}
		if errors.Is(err, client.ErrNoRunningPrompt) && c.activeFollower() == nil {
			c.hold(cmd.str["message"], steer)
			return rpc.PromptData{Disposition: rpc.DispositionQueued}, nil
		}
		if err != nil {
			return nil, err
		}
		return rpc.PromptData{Disposition: rpc.DispositionQueued}, nil
	})
}

// hold queues a message for the next prompt and says so (queue_update).
func (c *conn) hold(message string, steer bool) {
	c.mu.Lock()
	if steer {
		c.idle.steering = append(c.idle.steering, message)
	} else {
		c.idle.followUp = append(c.idle.followUp, message)
	}
	ev := queueEvent(c.idle)
	c.mu.Unlock()
	_ = c.out.write(ev)
}

// takeQueue empties the idle queue and returns what it held; changed
// reports whether it held anything.
func (c *conn) takeQueue() (q idleQueue, changed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q, c.idle = c.idle, idleQueue{}
	return q, q.len() > 0
}

// deliverQueue sends the messages held while idle into the prompt just
// started. A message the prompt refuses is logged (it is not lost: the
// log names it) and the rest are still sent.
func (c *conn) deliverQueue(ctx context.Context) {
	q, changed := c.takeQueue()
	if !changed {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, c.s.timeout())
	defer cancel()
	for _, m := range q.steering {
		if err := c.b.Steer(ctx, m); err != nil {
			c.s.logf("rpc: queued steer message not delivered: %s: %q", line.First(err.Error()), m)
		}
	}
	for _, m := range q.followUp {
		if err := c.b.FollowUp(ctx, m); err != nil {
			c.s.logf("rpc: queued follow_up message not delivered: %s: %q", line.First(err.Error()), m)
		}
	}
	_ = c.out.write(queueEvent(idleQueue{}))
}

// clearQueue is clear_queue: it empties the idle queue and returns its
// texts. The queue of a running prompt is in its workflow, which has no
// signal to clear it: that is an error naming what to do instead.
func (c *conn) clearQueue(cmd command) {
	if f := c.activeFollower(); f != nil {
		c.fail(cmd.id, cmd.typ, fmt.Sprintf("clear_queue while prompt %s runs is not supported: its queued messages are in its workflow; abort it (prompt_end lists the undelivered ones)", f.prompt.WorkflowID))
		return
	}
	q, changed := c.takeQueue()
	if changed {
		_ = c.out.write(queueEvent(idleQueue{}))
	}
	c.respond(cmd.id, cmd.typ, rpc.QueueData{Steering: nonNil(q.steering), FollowUp: nonNil(q.followUp)})
}

func queueEvent(q idleQueue) rpc.QueueEvent {
	return rpc.QueueEvent{Type: rpc.EventQueueUpdate, Steering: nonNil(append([]string(nil), q.steering...)), FollowUp: nonNil(append([]string(nil), q.followUp...))}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
