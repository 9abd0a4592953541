package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
)

// Steer and follow-up (docs/tui.md "Steer and follow-up"): a message
// typed while a prompt runs shows above the status line until its user
// message_end; one the prompt ends without delivering goes back into the
// input. Alt+Up lists the prompt's queue (every client's messages) to
// edit or remove one before it is delivered (editQueue).

// queuedMessage is a steer or follow-up sent and not delivered yet.
type queuedMessage struct {
	followUp bool
	text     string
	// sending: on its way (one at a time, so the prompt gets them in the
	// order they were typed); sent: the backend took it.
	sending, sent bool
}

// queueSentMsg is the outcome of sending a steer or follow_up.
type queueSentMsg struct {
	q   *queuedMessage
	err error
}

// queueName is the command (and signal) of a queued message.
func (q *queuedMessage) queueName() string {
	if q.followUp {
		return agent.SignalFollowUp
	}
	return agent.SignalSteer
}

// sendQueued sends text as steer (or follow_up) to the running prompt.
func (m *Model) sendQueued(text string, followUp bool) tea.Cmd {
	if m.prompt == nil {
		m.note("No prompt is running: send the message with Enter to start one.")
		return nil
	}
	m.queued = append(m.queued, &queuedMessage{followUp: followUp, text: text})
	return m.sendNext()
}

// sendNext sends the oldest message not sent yet, unless one is on its
// way.
func (m *Model) sendNext() tea.Cmd {
	if m.prompt == nil {
		return nil
	}
	var q *queuedMessage
	for _, x := range m.queued {
		if x.sending {
			return nil
		}
		if !x.sent && q == nil {
			q = x
		}
	}
	if q == nil {
		return nil
	}
	q.sending = true
	b, text, followUp := m.backend, q.text, q.followUp
	return m.call(func(ctx context.Context) tea.Msg {
		var err error
		if followUp {
			err = b.FollowUp(ctx, text)
		} else {
			err = b.Steer(ctx, text)
		}
		return queueSentMsg{q: q, err: err}
	})
}

// queueSent sends the next message; a send that failed is shown, and its
// text goes back to the input.
func (m *Model) queueSent(msg queueSentMsg) tea.Cmd {
	msg.q.sending = false
	if msg.err == nil && m.prompt == nil {
		// The prompt ended while this was on its way.
		m.unqueue(msg.q)
		m.undeliveredNote([]string{msg.q.text})
		return nil
	}
	if msg.err == nil {
		msg.q.sent = true
		return m.sendNext()
	}
	m.unqueue(msg.q)
	m.errorf("%s: %s", msg.q.queueName(), line.First(msg.err.Error()))
	m.restoreInput([]string{msg.q.text})
	return m.sendNext()
}

// unqueue removes q from the queue.
func (m *Model) unqueue(q *queuedMessage) {
	m.queued = slices.DeleteFunc(m.queued, func(x *queuedMessage) bool { return x == q })
}

// delivered removes the queued message with this text (a steer message
// first: the workflow delivers steering before follow-ups).
func (m *Model) delivered(text string) {
	for _, followUp := range []bool{false, true} {
		for _, q := range m.queued {
			if q.followUp == followUp && q.text == text {
				m.unqueue(q)
				return
			}
		}
	}
}

// undelivered runs at the prompt's end: messages still queued were not
// delivered (the prompt failed, was aborted, its retry was cancelled, or
// it ended as they arrived); they go back into the input, as the
// terminal agent restores its queue on abort, with the reason prompt_end
// gives. Messages prompt_end hands back that another client sent (starter
// steer, another chat) are shown, each with its reason.
func (m *Model) undelivered(end agent.Event) {
	var texts []string
	var sending []*queuedMessage
	others := append([]agent.UndeliveredMessage(nil), end.UndeliveredMessages...)
	reason := ""
	for _, q := range m.queued {
		if i := slices.IndexFunc(others, func(u agent.UndeliveredMessage) bool {
			return u.Text == q.text && (u.Kind == agent.SignalFollowUp) == q.followUp
		}); i >= 0 {
			reason = others[i].Reason
			others = append(others[:i], others[i+1:]...)
		}
		if q.sending {
			sending = append(sending, q) // queueSent decides
		} else {
			texts = append(texts, q.text)
		}
	}
	m.queued = sending
	if reason != "" && len(texts) > 0 {
		m.note("Not delivered (" + reason + "): " + strings.Join(texts, " · ") + " (back in the input)")
		m.restoreInput(texts)
	} else {
		m.undeliveredNote(texts)
	}
	for _, u := range others {
		kind := "steer"
		if u.Kind == agent.SignalFollowUp {
			kind = "follow-up"
		}
		m.note(fmt.Sprintf("Not delivered (%s from another client, %s): %s", kind, u.Reason, oneLineText(u.Text)))
	}
}

// undeliveredNote says which messages were not delivered and puts them
// back into the input.
func (m *Model) undeliveredNote(texts []string) {
	if len(texts) == 0 {
		return
	}
	m.note("Not delivered before the prompt ended: " + strings.Join(texts, " · ") + " (back in the input)")
	m.restoreInput(texts)
}

// restoreInput puts texts in front of what the input holds.
func (m *Model) restoreInput(texts []string) {
	if v := strings.TrimSpace(m.input.Value()); v != "" {
		texts = append(texts, v)
	}
	m.input.SetValue(strings.Join(texts, " "))
	m.input.CursorEnd()
}

// queueView draws the queued messages.
func (m *Model) queueView() []string {
	var lines []string
	room := lineRoom(m.width, 14)
	if p := m.pick; p != nil {
		for i, q := range p.list {
			mark := "  "
			if i == p.at {
				mark = "▸ "
			}
			lines = append(lines, noteStyle.Render(mark+queueLabel(q.Kind == agent.SignalFollowUp)+line.Cut(oneLineText(q.Text), room)))
		}
		return append(lines, noteStyle.Render("↑/↓: pick · enter: save (empty: remove) · esc: cancel"))
	}
	for _, q := range m.queued {
		lines = append(lines, noteStyle.Render(queueLabel(q.followUp)+line.Cut(oneLineText(q.text), room)))
	}
	return lines
}

func queueLabel(followUp bool) string {
	if followUp {
		return "Follow-up: "
	}
	return "Steering: "
}

// queuePick is the prompt's queue being edited (Alt+Up): its messages
// as the queue query listed them (every client's, with ids), the one
// picked, whose text the input holds, and what the input held before.
type queuePick struct {
	list  []agent.QueuedMessage
	at    int
	saved string
}

// Messages of the queue editor: the queue read, an edit's outcome.
type (
	queueListMsg struct {
		list []agent.QueuedMessage
		err  error
	}
	queueEditedMsg struct {
		m    agent.QueuedMessage
		text string // "": removed
		err  error
	}
)

// editQueue is Alt+Up while a prompt runs: it reads the prompt's queue
// to pick a message from.
func (m *Model) editQueue() tea.Cmd {
	b := m.backend
	return m.call(func(ctx context.Context) tea.Msg {
		list, err := b.Queue(ctx)
		return queueListMsg{list, err}
	})
}

// queueListed starts the editor on the last message of the queue.
func (m *Model) queueListed(msg queueListMsg) {
	switch {
	case msg.err != nil:
		m.errorf("queue: %s", line.First(msg.err.Error()))
	case len(msg.list) == 0 || m.prompt == nil:
		m.note("No queued message to edit.")
	case m.pick == nil:
		m.pick = &queuePick{list: msg.list, saved: m.input.Value()}
		m.pickAt(len(msg.list) - 1)
	}
}

// pickAt picks the i-th queued message (kept in the list's bounds) and
// puts its text into the input.
func (m *Model) pickAt(i int) {
	m.pick.at = max(min(i, len(m.pick.list)-1), 0)
	m.input.SetValue(m.pick.list[m.pick.at].Text)
	m.input.CursorEnd()
}

// pickKey handles a key while the editor is open: Up and Down pick,
// Enter saves the input as the picked message's text (edit_queue edit),
// or removes it when the input is empty (edit_queue remove); other keys
// edit the input.
func (m *Model) pickKey(msg tea.KeyMsg) tea.Cmd {
	switch msg.Type {
	case tea.KeyUp:
		m.pickAt(m.pick.at - 1)
		return nil
	case tea.KeyDown:
		m.pickAt(m.pick.at + 1)
		return nil
	case tea.KeyEnter:
		q, text := m.pick.list[m.pick.at], strings.TrimSpace(m.input.Value())
		m.endPick()
		if text == q.Text {
			return nil
		}
		p := agent.EditQueuePayload{Action: agent.QueueEdit, ID: q.ID, Text: text}
		if text == "" {
			p.Action = agent.QueueRemove
		}
		b := m.backend
		return m.call(func(ctx context.Context) tea.Msg {
			_, err := b.EditQueue(ctx, p)
			return queueEditedMsg{q, text, err}
		})
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return cmd
}

// endPick closes the editor; the input gets back what it held.
func (m *Model) endPick() {
	if m.pick != nil {
		m.input.SetValue(m.pick.saved)
		m.input.CursorEnd()
		m.pick = nil
	}
}

// queueEdited shows a refused edit (the message was delivered first) in
// one line; an edit of a message this chat queued changes it here too.
func (m *Model) queueEdited(msg queueEditedMsg) {
	if msg.err != nil {
		m.errorf("Could not change %q: %s", line.Cut(oneLineText(msg.m.Text), 40), line.First(msg.err.Error()))
		return
	}
	for _, q := range m.queued {
		if q.sent && q.text == msg.m.Text && q.queueName() == msg.m.Kind {
			if q.text = msg.text; q.text == "" {
				m.unqueue(q)
			}
			return
		}
	}
}
