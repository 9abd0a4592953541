package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/agent"
)

// The queue a user sees and changes (docs/spec.md 15.1.7): the queue
// query lists r.steering then r.followUps, and the edit_queue update
// edits, removes or clears them. Delivery (deliverQueued) takes a
// message out of its queue before it writes it to the session, and an
// update runs only while the main coroutine waits, so a message is
// either edited or delivered, never both: history holds the accepted
// update or the session write that delivered it. A refused update never
// reaches history (the validator only reads state). Each change emits
// queue_changed (an event is state, not a command: replay is unchanged).

func (r *run) pushQueued(m agent.QueuedMessage) {
	if m.Kind == agent.SignalSteer {
		r.steering = append(r.steering, m)
	} else {
		r.followUps = append(r.followUps, m)
	}
}

// queued returns the queue in delivery order: steering first.
func (r *run) queued() []agent.QueuedMessage {
	return append(append([]agent.QueuedMessage{}, r.steering...), r.followUps...)
}

// forget records why id left the queue, so a late edit is told.
func (r *run) forget(ms []agent.QueuedMessage, why string) {
	for _, m := range ms {
		r.queueGone[m.ID] = why
	}
}

// validateQueueEdit refuses, in one line, an edit the queue cannot take:
// an unknown action or kind, an edit without a change, and an id that is
// not queued (delivered, removed, or never sent). While steer or
// follow_up signals wait in their channels, or the id is one not given
// yet (its signal may be in this very task, already handed to the main
// coroutine's selector, which has not run: updates run first), the
// handler decides, after taking them in.
func (r *run) validateQueueEdit(p agent.EditQueuePayload, signals ...workflow.ReceiveChannel) error {
	switch p.Action {
	case agent.QueueClear:
		return nil
	case agent.QueueEdit, agent.QueueRemove:
	default:
		return fmt.Errorf("edit_queue: action is %q, want edit, remove or clear", p.Action)
	}
	if p.Action == agent.QueueEdit {
		if p.Kind != "" && p.Kind != agent.SignalSteer && p.Kind != agent.SignalFollowUp {
			return fmt.Errorf("edit_queue: kind is %q, want steer or follow_up", p.Kind)
		}
		if strings.TrimSpace(p.Text) == "" && p.Kind == "" {
			return errors.New("edit_queue: edit needs a non-empty text or a kind")
		}
	}
	if err := r.findQueued(p.ID); err != nil && signals[0].Len()+signals[1].Len() == 0 && !r.notYetGiven(p.ID) {
		return err
	}
	return nil
}

// notYetGiven reports whether id has the form of a queue id not handed
// out yet (m<n>, n beyond the last one given).
func (r *run) notYetGiven(id string) bool {
	n, err := strconv.Atoi(strings.TrimPrefix(id, "m"))
	return err == nil && strings.HasPrefix(id, "m") && n > r.queueSeq
}

// findQueued says why id is not queued (nil when it is).
func (r *run) findQueued(id string) error {
	switch {
	case slices.ContainsFunc(r.queued(), func(m agent.QueuedMessage) bool { return m.ID == id }):
		return nil
	case r.queueGone[id] != "":
		return fmt.Errorf("edit_queue: message %s was already %s", id, r.queueGone[id])
	}
	return fmt.Errorf("edit_queue: message %q is not queued (the queue query lists the ids)", id)
}

// editQueue applies a validated edit_queue. An edited message keeps
// its place; one whose kind changes goes last in the other queue.
func (r *run) editQueue(ctx workflow.Context, p agent.EditQueuePayload) (agent.EditQueueResult, error) {
	res := agent.EditQueueResult{Removed: []agent.QueuedMessage{}}
	r.drainMessages(ctx)
	if r.findQueued(p.ID) != nil && r.notYetGiven(p.ID) {
		// Its signal may sit in the main coroutine's selector: let that
		// coroutine run once (no command; only when the id is unknown, so
		// an update accepted before this change replays the same).
		yielded := false
		_ = workflow.Await(ctx, func() bool { defer func() { yielded = true }(); return yielded })
		r.drainMessages(ctx)
	}
	if err := r.findQueued(p.ID); err != nil && p.Action != agent.QueueClear {
		return res, err
	}
	for _, q := range []*[]agent.QueuedMessage{&r.steering, &r.followUps} {
		i := slices.IndexFunc(*q, func(m agent.QueuedMessage) bool { return m.ID == p.ID })
		switch {
		case p.Action == agent.QueueClear:
			res.Removed = append(res.Removed, *q...)
			*q = nil
			continue
		case i < 0:
			continue
		case p.Action == agent.QueueRemove:
			res.Removed = append(res.Removed, (*q)[i])
			*q = slices.Delete(*q, i, i+1)
		default:
			m := (*q)[i]
			if strings.TrimSpace(p.Text) != "" {
				m.Text = p.Text
			}
			if p.Kind == "" || p.Kind == m.Kind {
				(*q)[i] = m
				break
			}
			*q = slices.Delete(*q, i, i+1)
			m.Kind = p.Kind
			r.pushQueued(m)
		}
		break
	}
	r.forget(res.Removed, "removed")
	workflow.GetLogger(ctx).Info("queue edited", "session", r.in.SessionID, "action", p.Action, "id", p.ID, "removed", len(res.Removed))
	res.Queue = r.queued()
	r.emit(ctx, agent.Event{Type: agent.EventQueueChanged})
	return res, nil
}

// userMessage is the session's user message of a delivered message.
func userMessage(m agent.QueuedMessage) agent.Message {
	user := agent.TextMessage(agent.RoleUser, m.Text)
	user.Content = append(user.Content, m.Images...)
	return user
}
