package tui

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
)

// slashHelp lists the slash commands.
const slashHelp = `/retry on|off    switch automatic retry (saved in the settings file; tells the running prompt)
/compact [text]  compact the session's context now, with optional instructions for the summary
/state           show the session state (autoRetryEnabled, isRetrying, queued messages, approvals, ...)
/steer TEXT      steer the running prompt (as Enter while it runs)
/followup TEXT   queue a follow-up for the running prompt (as Alt+Enter while it runs)
/checkpoints     list the session's checkpoints: each turn's tool calls and the paths they changed
/rewind N [--force]  put checkpoint N's files back and continue the conversation from there
/help            this list
/quit            leave (a running prompt keeps running in Temporal)
enter            send a prompt; while one runs, steer it: delivered after the current tool batch
alt+enter        while a prompt runs, queue a follow-up: delivered when it would otherwise end
alt+up           while a prompt runs, list its queue: up/down pick, enter saves the edited text (empty: removes it), esc closes
y / n            approve / deny the tool call asked about (n: type an optional reason, enter)
esc              abort the prompt, or cancel a pending retry while "Retrying…" shows`

// rewoundMsg is a /rewind's note; the list is then read again (open).
type rewoundMsg string

// slash runs a slash command line.
func (m *Model) slash(text string) tea.Cmd {
	name, arg, _ := strings.Cut(strings.TrimPrefix(text, "/"), " ")
	arg = strings.TrimSpace(arg)
	switch strings.ToLower(name) {
	case "quit", "exit", "q":
		return m.quit()
	case "help":
		m.note(slashHelp)
		return nil
	case "retry":
		enabled := strings.EqualFold(arg, "on")
		if !enabled && !strings.EqualFold(arg, "off") {
			m.errorf("usage: /retry on|off")
			return nil
		}
		return m.do("set_auto_retry", func(ctx context.Context) ([]entry, error) {
			if err := m.backend.SetAutoRetry(ctx, enabled); err != nil {
				return nil, err
			}
			return []entry{{kind: entryNote, text: fmt.Sprintf("Auto-retry %s (retry.enabled=%t saved).", map[bool]string{true: "on", false: "off"}[enabled], enabled)}}, nil
		})
	case "compact":
		if m.prompt != nil || m.starting {
			m.note("A prompt is running: compact after it ends.")
			return nil
		}
		m.compacting = "manual"
		// The summary call's retries come as events on ch while it runs,
		// then the result; ch is closed after it.
		ch := make(chan tea.Msg, 16)
		send := func(msg tea.Msg) {
			select {
			case ch <- msg:
			case <-m.ctx.Done():
			}
		}
		cmd := m.do("compact", func(ctx context.Context) ([]entry, error) {
			// No command timeout: a summary call takes as long as it takes.
			res, err := m.backend.Compact(m.ctx, arg, func(e agent.Event) { send(compactEventMsg{event: e, ch: ch}) })
			switch {
			case err != nil:
				return nil, err
			case res.Result == nil:
				return []entry{{kind: entryNote, text: "Nothing to compact: the recent messages are the whole context."}}, nil
			}
			return []entry{{kind: entryNote, text: fmt.Sprintf("Compacted %d tokens into a summary (entry %s).",
				res.Result.TokensBefore, res.Result.EntryID)}}, nil
		})
		return func() tea.Msg {
			go func() {
				defer close(ch)
				msg := cmd().(resultMsg)
				msg.endsCompact = true
				send(msg)
			}()
			return waitEvent(ch)()
		}
	case "state":
		return m.readState(true)
	case "checkpoints":
		return m.do("checkpoints", func(ctx context.Context) ([]entry, error) {
			cps, err := m.backend.Checkpoints(ctx)
			var list strings.Builder
			if err == nil {
				err = cps.Listing(ctx, &list)
			}
			if err != nil {
				return nil, err
			}
			return []entry{{kind: entryNote, text: cmp.Or(strings.TrimSuffix(list.String(), "\n"), "No checkpoints yet.")}}, nil
		})
	case "rewind":
		to, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(arg, "--force")))
		if err != nil || to <= 0 {
			m.errorf("usage: /rewind N [--force] (/checkpoints lists them)")
			return nil
		}
		force := strings.HasSuffix(arg, "--force")
		return m.call(func(ctx context.Context) tea.Msg {
			cps, err := m.backend.Checkpoints(ctx)
			undo := 0
			if err == nil {
				undo, err = cps.Rewind(ctx, to, force)
			}
			if err != nil {
				return resultMsg{entries: []entry{{kind: entryError, text: "rewind: " + line.First(err.Error())}}}
			}
			return rewoundMsg(fmt.Sprintf("Back at checkpoint %d, files and conversation (undo: /rewind %d).", to, undo))
		})
	case "steer", "followup", "follow-up", "follow_up":
		if arg == "" {
			m.errorf("usage: /%s TEXT", strings.ToLower(name))
			return nil
		}
		return m.sendQueued(arg, strings.ToLower(name) != "steer")
	}
	m.errorf("unknown command %q (try /help)", "/"+name)
	return nil
}
