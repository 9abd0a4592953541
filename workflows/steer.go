package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/agent"
)

// SkippedForSteerMessage is the result of a tool call that had not started
// when a steer message was queued: the user changed course, so the rest
// of the batch is skipped (the terminal agent's wording).
const SkippedForSteerMessage = "Skipped due to queued user message."

// Messages into a running prompt (docs/spec.md 15.1): steer and
// follow_up signals queue a message; the loop delivers it at a turn
// boundary, and a prompt that ends with messages still queued hands them
// back (handBack), so nothing a user sent disappears.

// receiveMessage moves one signal of a steer or follow_up channel into
// its queue (a bad one is logged and dropped); it reports whether the
// channel had one.
func (r *run) receiveMessage(ctx workflow.Context, c workflow.ReceiveChannel, name string) bool {
	var p agent.UserMessagePayload
	if !c.ReceiveAsync(&p) {
		return false
	}
	err := CheckImages(p.Images)
	if strings.TrimSpace(p.Message) == "" {
		err = errors.New(`want {"message": "..."} with a non-empty message`)
	}
	if err != nil {
		workflow.GetLogger(ctx).Warn(name+" ignored: "+err.Error(), "session", r.in.SessionID)
		return true
	}
	r.queueSeq++
	if p.SentAt.IsZero() {
		p.SentAt = workflow.Now(ctx).UTC()
	}
	r.pushQueued(agent.QueuedMessage{ID: fmt.Sprintf("m%d", r.queueSeq), Kind: name, Text: p.Message, Images: p.Images, SentAt: p.SentAt})
	r.emit(ctx, agent.Event{Type: agent.EventQueueChanged})
	return true
}

// drainMessages applies the steer and follow_up signals still waiting in
// their channels.
func (r *run) drainMessages(ctx workflow.Context) {
	for _, name := range []string{agent.SignalSteer, agent.SignalFollowUp} {
		ch := workflow.GetSignalChannel(ctx, name)
		for r.receiveMessage(ctx, ch, name) {
		}
	}
}

// steerQueued reports (after draining the signal channels) whether a
// steer message waits: the tool calls not started yet are skipped.
func (r *run) steerQueued(ctx workflow.Context) bool {
	r.drainSignals(ctx)
	return len(r.steering) > 0
}

// queuedTurnDue is asked when the loop would end with an answer: after
// draining the signals (so a message that arrived in the last moment is
// not lost), a queued steer message, else a queued follow-up, makes the
// prompt go on with another turn.
func (r *run) queuedTurnDue(ctx workflow.Context) bool {
	r.drainSignals(ctx)
	switch {
	case r.aborted:
		return false
	case len(r.steering) > 0:
		return true
	case len(r.followUps) > 0:
		r.FollowUpDue = true
		return true
	}
	return false
}

// Why a queued message did not reach the model (UndeliveredMessage.Reason).
const (
	ReasonPromptAborted  = "prompt aborted"
	ReasonRetryCancelled = "retry cancelled"
	ReasonPromptFailed   = "prompt failed"
	// ReasonPromptEnded: the prompt completed in the moment the message
	// came (the loop checks the queue last, so this is a safety net).
	ReasonPromptEnded = "prompt completed as it arrived"
)

// handBack drains the signals of a prompt that ends and returns the
// messages still queued (steering first, each oldest first) with reason,
// emptying the queues: prompt_end and the result carry them, so the
// client that sent one hands it back to its user. Logged, so an
// operator sees what was not delivered.
func (r *run) handBack(ctx workflow.Context, reason string) []agent.UndeliveredMessage {
	r.drainMessages(ctx)
	var out []agent.UndeliveredMessage
	for _, m := range r.queued() {
		out = append(out, agent.UndeliveredMessage{Kind: m.Kind, Text: m.Text, Reason: reason})
	}
	r.forget(r.queued(), "handed back: "+reason)
	r.steering, r.followUps, r.FollowUpDue = nil, nil, false
	if len(out) > 0 {
		workflow.GetLogger(ctx).Warn("prompt ended with queued messages not delivered", "session", r.in.SessionID, "count", len(out), "reason", reason)
	}
	return out
}

// queueMode returns mode or its default, one-at-a-time (as the terminal
// agent).
func queueMode(mode string) string {
	if mode == agent.QueueModeAll {
		return mode
	}
	return agent.QueueModeOneAtATime
}

// deliverQueued runs at the start of a model step: it writes the queued
// steer messages (or, when the loop was about to end, the follow-ups) that
// one delivery takes to the session as user messages, and makes them the
// end of the run context. queue_changed says so now; their message
// events follow the turn's turn_start (openTurn).
func (r *run) deliverQueued(ctx workflow.Context) error {
	r.drainMessages(ctx)
	queue, mode := &r.steering, r.in.Agent.SteeringMode
	if len(r.steering) == 0 {
		if !r.FollowUpDue {
			return nil
		}
		queue, mode = &r.followUps, r.in.Agent.FollowUpMode
	}
	r.FollowUpDue = false
	n := len(*queue)
	if queueMode(mode) == agent.QueueModeOneAtATime && n > 1 {
		n = 1
	}
	// Taken out before the session write: an edit_queue that comes
	// while it runs finds the message delivered (queue.go).
	taken := slices.Clone((*queue)[:n])
	*queue = (*queue)[n:]
	r.forget(taken, "delivered")
	for i, m := range taken {
		user := userMessage(m)
		user.Timestamp = workflow.Now(ctx).UnixMilli()
		id := r.newID()
		if _, err := r.record(ctx, id, r.LeafID, user); err != nil {
			*queue = append(taken[i:], *queue...) // not delivered: handed back
			return err
		}
		r.advance(id)
		r.deliveredUsers = append(r.deliveredUsers, agent.Event{Type: agent.EventMessageEnd, EntryID: id, Message: &user})
	}
	r.emit(ctx, agent.Event{Type: agent.EventQueueChanged})
	return nil
}
