package tui

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/durableagent/durableagent/internal/client"
)

// A chat follows its session, not only the prompts it started (issue 23):
// while idle it asks for the session's latest prompt every watchInterval
// (client.Session.LatestPrompt) and follows one it has not seen, running
// or already ended. The first look, made as the chat opens, only notes the
// latest prompt (the history shows it; opened follows it if it runs).

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
	return tea.Batch(m.followRun(msg.run, true), m.watchLater())
}

// followRun follows a prompt this chat did not start, from its first
// event: the one running when the chat opened, or one started elsewhere
// while it was idle.
func (m *Model) followRun(run client.PromptRun, elsewhere bool) tea.Cmd {
	ch := make(chan tea.Msg, 64)
	go follow(m.ctx, m.backend, run.Prompt, ch)
	cmd := m.started(promptStartedMsg{prompt: run.Prompt, events: ch, attached: true, elsewhere: elsewhere})
	m.prompt.first = run.FirstRunID
	return cmd
}
