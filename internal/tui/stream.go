package tui

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
)

// startPrompt starts a prompt and a goroutine that follows its events
// into a channel; waitEvent turns the channel into messages one by one.
func (m *Model) startPrompt(text string) tea.Cmd {
	ctx, b := m.ctx, m.backend
	return func() tea.Msg {
		sctx, cancel := context.WithTimeout(ctx, commandTimeout)
		p, err := b.StartPrompt(sctx, text)
		cancel()
		if err != nil {
			return promptErrorMsg{err: err}
		}
		ch := make(chan tea.Msg, 64)
		go follow(ctx, b, p, ch)
		return promptStartedMsg{prompt: p, events: ch, message: text}
	}
}

// follow sends every event of p, then a streamEndMsg, and closes ch. It
// stops when ctx ends (the UI quit): the prompt keeps running.
func follow(ctx context.Context, b *client.Session, p client.Prompt, ch chan<- tea.Msg) {
	defer close(ch)
	send := func(msg tea.Msg) {
		select {
		case ch <- msg:
		case <-ctx.Done():
		}
	}
	_, err := b.Follow(ctx, p.RunID, 0, func(e agent.Event) { send(eventMsg{event: e}) })
	send(streamEndMsg{err: err})
}

// waitEvent delivers the next message of a prompt's channel.
func waitEvent(ch <-chan tea.Msg) tea.Cmd {
	return func() tea.Msg {
		msg, ok := <-ch
		if !ok {
			return nil
		}
		return msg
	}
}
