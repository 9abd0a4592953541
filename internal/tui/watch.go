package tui

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/durableagent/durableagent/internal/client"
)

// A chat follows its session, not only the prompts it started (issue 23):
// while it is idle it asks, every watchInterval, for its session's latest
// prompt (one DescribeWorkflowExecution per interval: the backend's
// LatestPrompt). A prompt it has not seen (started by `starter
// prompt --session S`, another chat, RPC) is followed like one it
// attached to at start-up, running or already ended (a short one can
// end between two looks): its user message, output and answer show. The
// look made as the chat opens, before it reads the history, only notes
// the latest prompt (the history shows it; the start-up attach follows
// it if it runs).

// watchInterval is how often an idle chat looks for a prompt started
// elsewhere in its session.
const watchInterval = 2 * time.Second

type (
	// watchMsg: time to look again.
	watchMsg struct{}
	// watchedMsg is what the look found.
	watchedMsg struct {
		run client.PromptRun
		ok  bool
		err error
	}
)

// watchLater schedules the next look, unless one is scheduled or on its
// way.
func (m *Model) watchLater() tea.Cmd {
	if m.watching || m.quitting {
		return nil
	}
	m.watching = true
	return m.tick(watchInterval, func(time.Time) tea.Msg { return watchMsg{} })
}

// idle says whether the chat follows nothing and starts nothing.
func (m *Model) idle() bool {
	return m.prompt == nil && !m.starting && !m.loading && m.compacting == ""
}

// watch looks for the session's latest prompt when the chat is idle (else
// it waits for the next turn).
func (m *Model) watch() tea.Cmd {
	m.watching = false
	if m.quitting {
		return nil
	}
	if !m.idle() {
		return m.watchLater()
	}
	m.watching = true // the look is on its way
	return m.call(func(ctx context.Context) tea.Msg {
		run, ok, err := m.backend.LatestPrompt(ctx)
		return watchedMsg{run: run, ok: ok, err: err}
	})
}

// watched follows the prompt the look found when it is new to this chat:
// not the one the first look found, not one it followed, and the chat
// still idle.
func (m *Model) watched(msg watchedMsg) tea.Cmd {
	m.watching = false
	if msg.err != nil || !msg.ok {
		m.looked = m.looked || msg.err == nil
		return m.watchLater()
	}
	id := msg.run.FirstRunID
	first := !m.looked
	m.looked = true
	if first || id == m.seenRun || m.endedRuns[id] || !m.idle() {
		m.seenRun = id
		return m.watchLater()
	}
	m.seenRun = id
	ch := make(chan tea.Msg, 64)
	fctx, stop := context.WithCancel(m.ctx)
	go follow(fctx, m.backend, msg.run.Prompt, ch)
	cmd := m.started(promptStartedMsg{prompt: msg.run.Prompt, events: ch, attached: true, elsewhere: true, stop: stop})
	if m.prompt != nil {
		m.prompt.first = id
	}
	return tea.Batch(cmd, m.watchLater())
}
