package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/toolview"
)

// Steer and follow-up (docs/tui.md "Steer and follow-up"): the followed
// prompt's queue as its workflow holds it, then this chat's messages no
// read listed yet; undelivered ones go back into the input.

// queuedMessage is a steer or follow-up this chat sent that no read of
// the queue listed yet.
type queuedMessage struct {
	kind, text string // kind: agent.SignalSteer or agent.SignalFollowUp
	// sending: on its way (one at a time, so the prompt gets them in the
	// order they were typed); sent: the backend took it.
	sending, sent bool
}

// queueSentMsg is the outcome of sending a steer or follow_up.
type queueSentMsg struct {
	q   *queuedMessage
	err error
}

// sendQueued sends text as steer (or follow_up) to the running prompt.
func (m *Model) sendQueued(text string, followUp bool) tea.Cmd {
	if m.prompt == nil {
		m.note("No prompt is running: send the message with Enter to start one.")
		return nil
	}
	kind := agent.SignalSteer
	if followUp {
		kind = agent.SignalFollowUp
	}
	m.queued = append(m.queued, &queuedMessage{kind: kind, text: text})
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
	b, kind, text := m.backend, q.kind, q.text
	return m.call(func(ctx context.Context) tea.Msg { return queueSentMsg{q: q, err: b.Send(ctx, kind, text)} })
}

// queueSent sends the next message; a send that failed is shown, and its
// text goes back to the input, as does one the prompt ended before.
func (m *Model) queueSent(msg queueSentMsg) tea.Cmd {
	q := msg.q
	q.sending = false
	if msg.err == nil && m.prompt != nil {
		q.sent = true
		return m.sendNext()
	}
	m.queued = slices.DeleteFunc(m.queued, func(x *queuedMessage) bool { return x == q })
	if msg.err == nil { // the prompt ended while this was on its way
		m.undeliveredNote("before the prompt ended", []string{q.text})
		return nil
	}
	m.errorf("%s: %s", q.kind, line.First(msg.err.Error()))
	m.restoreInput([]string{q.text})
	return m.sendNext()
}

// takeSent removes a message sent and not listed yet, of this kind
// ("": any) and text; false when there is none.
func (m *Model) takeSent(kind, text string) bool {
	i := slices.IndexFunc(m.queued, func(q *queuedMessage) bool { return q.sent && (kind == "" || q.kind == kind) && q.text == text })
	if i >= 0 {
		m.queued = slices.Delete(m.queued, i, i+1)
	}
	return i >= 0
}

// queueReadMsg is the followed prompt's queue, read.
type queueReadMsg struct {
	list []agent.QueuedMessage
	err  error
}

// readQueue reads the followed prompt's queue (query queue), one read at
// a time (reading): a change while one is on its way (reread) reads
// again when it answers, so an older answer never replaces a newer one.
func (m *Model) readQueue() tea.Cmd {
	if m.reading {
		m.reread = true
		return nil
	}
	m.reading, m.reread = true, false
	b := m.backend
	return m.call(func(ctx context.Context) tea.Msg {
		list, err := b.Queue(ctx)
		return queueReadMsg{list, err}
	})
}

// queueRead shows the queue read (a failed read keeps the last: the next
// change reads again). A message of this chat it lists is known by its
// id from then on, edited or not: the workflow does not keep who sent it.
func (m *Model) queueRead(msg queueReadMsg) tea.Cmd {
	m.reading = false
	if m.prompt != nil && msg.err == nil {
		m.queue = msg.list
		for _, x := range msg.list {
			if !m.mine[x.ID] && m.takeSent(x.Kind, x.Text) {
				m.mine[x.ID] = true
			}
		}
	}
	if m.reread && m.prompt != nil {
		return m.readQueue()
	}
	return nil
}

// undelivered runs at the prompt's end: this chat's messages that it
// did not deliver (the prompt failed, was aborted, its retry was
// cancelled, or it ended as they arrived) go back into the input, as
// the terminal agent restores its queue on abort, with the reason
// prompt_end gives. Messages prompt_end hands back that another client
// sent (starter steer, another chat) are shown, each with its reason.
func (m *Model) undelivered(end agent.Event) {
	var texts []string
	var others []agent.UndeliveredMessage
	reason := ""
	for _, u := range end.UndeliveredMessages {
		// This chat's: listed with one of its ids, or not listed yet.
		listed := slices.ContainsFunc(m.queue, func(x agent.QueuedMessage) bool { return m.mine[x.ID] && x.Kind == u.Kind && x.Text == u.Text })
		if listed || m.takeSent(u.Kind, u.Text) {
			texts, reason = append(texts, u.Text), u.Reason
		} else {
			others = append(others, u)
		}
	}
	var sending []*queuedMessage
	for _, q := range m.queued {
		if q.sending {
			sending = append(sending, q) // queueSent decides
		} else {
			texts = append(texts, q.text)
		}
	}
	m.queued, m.queue, m.mine = sending, nil, nil
	why := "before the prompt ended"
	if reason != "" {
		why = "(" + reason + ")"
	}
	m.undeliveredNote(why, texts)
	for _, u := range others {
		kind := "steer"
		if u.Kind == agent.SignalFollowUp {
			kind = "follow-up"
		}
		m.note(fmt.Sprintf("Not delivered (%s from another client, %s): %s", kind, u.Reason, toolview.OneLine(u.Text)))
	}
}

// undeliveredNote says which messages were not delivered, and why, and
// puts them back into the input.
func (m *Model) undeliveredNote(why string, texts []string) {
	if len(texts) == 0 {
		return
	}
	m.note("Not delivered " + why + ": " + strings.Join(texts, " · ") + " (back in the input)")
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

// queueView draws the queue, or the editor's list while it is open.
func (m *Model) queueView() []string {
	var lines []string
	room := lineRoom(m.width, 14)
	add := func(mark, kind, text string) {
		label := "Steering: "
		if kind == agent.SignalFollowUp {
			label = "Follow-up: "
		}
		lines = append(lines, noteStyle.Render(mark+label+line.Cut(toolview.OneLine(text), room)))
	}
	if p := m.pick; p != nil {
		for i, q := range p.list {
			mark := "  "
			if i == p.at {
				mark = "▸ "
			}
			add(mark, q.Kind, q.Text)
		}
		return append(lines, noteStyle.Render("↑/↓: pick · enter: save (empty: remove) · esc: cancel"))
	}
	for _, q := range m.queue {
		add("", q.Kind, q.Text)
	}
	for _, q := range m.queued {
		add("", q.kind, q.text)
	}
	return lines
}

// queuePick is the prompt's queue being edited (Alt+Up): its messages
// as shown when it opened (every client's, with ids), the one picked,
// whose text the input holds, and what the input held before.
type queuePick struct {
	list  []agent.QueuedMessage
	at    int
	saved string
}

// editQueue is Alt+Up while a prompt runs: it opens the editor on the
// last message of the queue shown.
func (m *Model) editQueue() {
	if len(m.queue) == 0 {
		m.note("No queued message to edit.")
		return
	}
	m.pick = &queuePick{list: slices.Clone(m.queue), saved: m.input.Value()}
	m.pickAt(len(m.queue) - 1)
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
// edit the input. The queue_changed that follows shows the change.
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
			if _, err := b.EditQueue(ctx, p); err != nil { // refused: delivered or removed first
				return resultMsg{entries: []entry{{kind: entryError,
					text: fmt.Sprintf("Could not change %q: %s", line.Cut(toolview.OneLine(q.Text), 40), line.First(err.Error()))}}}
			}
			return nil
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
