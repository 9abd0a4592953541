package tui

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
)

// Reopening a session (docs/tui.md "Reopening a session"): the session's
// earlier messages first; a running prompt is then followed from its
// first event, and the history from its user message on gives way to the
// replay (cutHistory), so each message shows once.

// openedMsg carries the history.
type openedMsg struct {
	history []agent.Message
	err     error
	// latest is the first look of the watch (watch.go), made before
	// the history is read.
	latest watchedMsg
}

// historyUser marks a user message of the history in the list.
type historyUser struct {
	index     int
	text      string
	timestamp int64
}

// open reads the session's messages. Until they are shown Enter waits
// (loading), so a prompt started here is not in them.
func (m *Model) open() tea.Cmd {
	b := m.backend
	return m.call(func(ctx context.Context) tea.Msg {
		var latest watchedMsg
		latest.run, latest.ok, latest.err = b.LatestPrompt(ctx)
		msgs, err := b.Messages(ctx)
		return openedMsg{history: msgs, err: err, latest: latest}
	})
}

// opened shows the history, then follows the latest prompt from its
// first event if it runs (attach).
func (m *Model) opened(msg openedMsg) tea.Cmd {
	m.loading = false
	if msg.err != nil {
		m.errorf("Could not read the session's earlier messages: %s", line.First(msg.err.Error()))
	} else {
		m.showHistory(msg.history)
	}
	var attach tea.Cmd
	if msg.latest.err == nil {
		m.looked = true
		if run := msg.latest.run; msg.latest.ok {
			m.seenRun = run.FirstRunID
			if run.Running {
				attach = m.followRun(run, false)
			}
		}
	}
	return tea.Batch(attach, m.watchLater())
}

// showHistory puts the messages in the list after the welcome line
// (before anything that came since).
func (m *Model) showHistory(msgs []agent.Message) {
	es := []entry{{kind: entryNote, text: "Earlier in this session:"}}
	var users []historyUser
	tools := map[string]*toolView{}
	for _, msg := range msgs {
		switch msg.Role {
		case agent.RoleUser:
			users = append(users, historyUser{index: m.historyAt + len(es), text: msg.Text(), timestamp: msg.Timestamp})
			es = append(es, entry{kind: entryUser, text: msg.Text()})
		case agent.RoleAssistant:
			for _, e := range assistantEntries(msg, "") {
				if e.tool != nil {
					tools[e.tool.callID] = e.tool
				}
				es = append(es, e)
			}
		case agent.RoleToolResult:
			t := tools[msg.ToolCallID]
			if t == nil {
				t = &toolView{callID: msg.ToolCallID, name: msg.ToolName}
				es = append(es, entry{kind: entryTool, tool: t})
			}
			t.done, t.isError, t.result = true, msg.IsError, msg.Text()
		case agent.RoleSummary:
			es = append(es, entry{kind: entryNote, text: "(earlier messages compacted into a summary)"})
		}
	}
	if len(es) == 1 {
		return
	}
	rest := append(es, m.entries[m.historyAt:]...)
	m.entries = append(m.entries[:m.historyAt], rest...)
	m.historyLen, m.historyUsers = len(es), users
}

// cutHistory drops the history from the running prompt's user message on:
// the replay of its events draws those messages again.
func (m *Model) cutHistory(user agent.Message) {
	text := user.Text()
	for i := len(m.historyUsers) - 1; i >= 0; i-- {
		h := m.historyUsers[i]
		if h.text != text || h.timestamp != user.Timestamp || user.Timestamp == 0 {
			continue
		}
		from, end := h.index, m.historyAt+m.historyLen
		if from == m.historyAt+1 {
			from = m.historyAt // nothing earlier: the heading goes too
		}
		m.entries = append(m.entries[:from], m.entries[end:]...)
		m.historyLen = from - m.historyAt
		m.historyUsers = m.historyUsers[:i]
		return
	}
}
