package tui

import (
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/durableagent/durableagent/agent"
)

// handleEvent updates the screen for one event of the followed prompt.
func (m *Model) handleEvent(e agent.Event) tea.Cmd {
	m.lastSeq = e.Seq
	switch e.Type {
	case agent.EventAgentStart:
		// The backoff is over and the model is called again: Esc aborts the
		// call, as before the chain (the original restores its Esc handler
		// here too, ahead of auto_retry_end).
		m.retry = nil
	case agent.EventMessageUpdate:
		m.streamDelta(e)
	case agent.EventMessageEnd:
		m.showMessage(e)
	case agent.EventToolExecutionStart:
		m.toolStart(e)
	case agent.EventToolExecutionUpdate:
		m.toolUpdate(e)
	case agent.EventToolExecutionEnd:
		m.toolEnd(e)
	case agent.EventAutoRetryStart:
		now := m.now()
		wake := retryBase(e, now).Add(time.Duration(e.DelayMs) * time.Millisecond)
		m.retry = &retryWait{attempt: e.Attempt, max: e.MaxAttempts, wake: wake, left: max(wake.Sub(now), 0)}
		m.countdown++
		return m.nextTick()
	case agent.EventAutoRetryEnd:
		m.retry = nil
		if !e.Success {
			m.errorf("%s", e.String()) // "Retry failed after N attempts: <finalError>"
		}
	case agent.EventAutoCompactionStart:
		m.compacting = e.Reason
		if m.compacting == "" {
			m.compacting = "threshold"
		}
	case agent.EventAutoCompactionEnd:
		m.compacting = ""
		if e.ErrorMessage != "" && !e.Aborted {
			m.errorf("%s", e.String())
		} else {
			m.note(e.String())
		}
	case agent.EventPromptEnd:
		switch e.Status {
		case agent.StatusFailed:
			m.errorf("Prompt failed: %s", e.ErrorMessage)
		case agent.StatusAborted:
			m.note("Prompt aborted.")
		}
		m.endPrompt()
	}
	return nil
}

// showMessage puts an assistant message in the list, in the place of
// what was streamed of it: the stored message wins over the stream. An
// error drops the failed attempt's partial text and shows the error; the
// message's tool calls are listed with their arguments, to be run.
func (m *Model) showMessage(e agent.Event) {
	msg := e.Message
	if msg == nil || msg.Role != agent.RoleAssistant {
		return
	}
	if e.EntryID != "" {
		m.endedEntries[e.EntryID] = true
	}
	_, live := m.liveEntry()
	var es []entry
	switch msg.StopReason {
	case agent.StopReasonError:
		es = append(es, entry{kind: entryError, text: "✗ " + msg.ErrorMessage})
	default:
		thinking := messageThinking(*msg)
		if thinking == "" && live != nil {
			// The message_end view leaves thinking out: keep what
			// streamed of it.
			thinking = live.thinking()
		}
		if thinking != "" {
			es = append(es, entry{kind: entryThinking, text: thinking})
		}
		if t := msg.Text(); t != "" {
			es = append(es, entry{kind: entryAssistant, text: t})
		}
		for _, b := range msg.Content {
			if b.Type == "toolCall" && b.ToolCall != nil {
				es = append(es, entry{kind: entryTool, tool: &toolView{
					callID: b.ToolCall.ID, name: b.ToolCall.Name, args: b.ToolCall.Arguments}})
			}
		}
		if msg.StopReason == agent.StopReasonAborted {
			es = append(es, entry{kind: entryNote, text: "(model call aborted)"})
		}
	}
	m.replaceLive(es)
}

// messageThinking joins the message's thinking blocks.
func messageThinking(msg agent.Message) string {
	var parts []string
	for _, b := range msg.Content {
		if b.Type == "thinking" && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// retryBase is when the backoff timer started: the event's workflow time
// when it is plausible on this clock, else now (the countdown then ends a
// little late rather than early).
func retryBase(e agent.Event, now time.Time) time.Time {
	if e.Time.IsZero() || e.Time.After(now) || now.Sub(e.Time) > time.Minute {
		return now
	}
	return e.Time
}

// countDown refreshes the retry line on a tick of the current generation.
func (m *Model) countDown(gen int) tea.Cmd {
	if gen != m.countdown || m.retry == nil {
		return nil // a tick of an earlier wait
	}
	m.retry.left = max(m.retry.wake.Sub(m.now()), 0)
	if m.retry.left == 0 {
		return nil
	}
	return m.nextTick()
}

// nextTick schedules the next refresh when the shown number of seconds
// changes (the line shows whole seconds, rounded up).
func (m *Model) nextTick() tea.Cmd {
	if m.retry == nil || m.retry.left <= 0 {
		return nil
	}
	d := m.retry.left % time.Second
	if d == 0 {
		d = time.Second
	}
	gen := m.countdown
	return m.tick(d, func(time.Time) tea.Msg { return countdownMsg{gen: gen} })
}
