package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/retry"
)

// handleEvent updates the screen for one event of the followed prompt.
func (m *Model) handleEvent(e agent.Event) tea.Cmd {
	m.lastSeq = e.Seq
	m.statsEvent(e)
	switch e.Type {
	case agent.EventAgentStart:
		// The backoff is over and the model is called again: Esc aborts the
		// call, as before the chain (the original restores its Esc handler
		// here too, ahead of auto_retry_end).
		m.retry = nil
	case agent.EventMessageStart:
		if p := m.prompt; p != nil && e.Message != nil && e.Message.Role == agent.RoleAssistant {
			p.calling = "the model"
			if e.Message.Model != "" {
				p.calling = e.Message.Provider + "/" + e.Message.Model
			}
		}
	case agent.EventMessageUpdate:
		m.streamDelta(e)
	case agent.EventMessageEnd:
		if p := m.prompt; p != nil && e.Message != nil && e.Message.Role == agent.RoleAssistant {
			p.calling = ""
		}
		if e.Message != nil && e.Message.Role == agent.RoleUser {
			m.showUser(*e.Message)
		} else {
			m.showMessage(e)
		}
	case agent.EventToolApprovalRequest:
		return m.approvalRequested(e)
	case agent.EventToolExecutionStart:
		m.startedTools[e.ToolCallID] = true
		if p := m.prompt; p != nil {
			p.tools = append(p.tools, runningTool{callID: e.ToolCallID, name: e.ToolName})
		}
		m.approvalDecided(e.ToolCallID)
		m.toolStart(e)
	case agent.EventToolExecutionUpdate:
		m.toolUpdate(e)
	case agent.EventToolExecutionEnd:
		if p := m.prompt; p != nil {
			p.tools = slices.DeleteFunc(p.tools, func(t runningTool) bool { return t.callID == e.ToolCallID })
		}
		m.approvalDecided(e.ToolCallID)
		return m.toolEnd(e)
	case agent.EventAutoRetryStart, agent.EventAutoRetryEnd:
		return m.retryEvent(e)
	case agent.EventQueueChanged:
		return m.readQueue()
	case agent.EventSubAgentStart, agent.EventSubAgentEnd:
		// Under the parent: each sub-agent's start (with how to follow
		// it) and end; the stats line counts the running ones.
		m.note(e.String())
	case agent.EventAutoCompactionStart:
		m.compacting = cmp.Or(e.Reason, "threshold")
	case agent.EventAutoCompactionEnd:
		m.compacting = ""
		if e.ErrorMessage != "" && !e.Aborted {
			m.errorf("%s", e.String())
		} else {
			m.note(e.String())
		}
	case agent.EventPromptEnd:
		switch {
		case e.Status == agent.StatusFailed && strings.HasPrefix(e.ErrorMessage, retry.CancelledMessage):
			// The user stopped it (abort_retry): one word for a user's
			// stop, as for abort (issue 23).
			m.note("Prompt aborted: " + e.ErrorMessage)
		case e.Status == agent.StatusFailed:
			m.errorf("Prompt failed: %s", e.ErrorMessage)
		case e.Status == agent.StatusAborted:
			m.note("Prompt aborted.")
		}
		if e.Worktree != nil {
			m.note(e.Worktree.Text) // where a --worktree job's branch stands
		}
		m.endPrompt(e)
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
	streamed := ""
	if _, live := m.liveEntry(); live != nil {
		// The message_end view leaves thinking out: keep what streamed
		// of it.
		streamed = messageThinking(live.Message())
	}
	m.replaceLive(assistantEntries(*msg, streamed))
}

// assistantEntries are the list entries of an assistant message: its
// error, or its thinking (streamed: what streamed of it, when the message
// has none), text and tool calls.
func assistantEntries(msg agent.Message, streamed string) []entry {
	if msg.StopReason == agent.StopReasonError {
		return []entry{{kind: entryError, text: "✗ " + msg.ErrorMessage}}
	}
	var es []entry
	if thinking := cmp.Or(messageThinking(msg), streamed); thinking != "" {
		es = append(es, entry{kind: entryThinking, text: thinking})
	}
	if t := msg.Text(); t != "" {
		es = append(es, entry{kind: entryAssistant, text: t})
	}
	for _, tc := range msg.ToolCalls() {
		es = append(es, entry{kind: entryTool, tool: &toolView{callID: tc.ID, name: tc.Name, args: tc.Arguments}})
	}
	if msg.StopReason == agent.StopReasonAborted {
		es = append(es, entry{kind: entryNote, text: "(model call aborted)"})
	}
	return es
}

// showUser shows a user message_end. The prompt's own message comes
// first: one this chat started is on screen already; for a prompt it
// attached to, the history from that message on gives way to the replay.
// Later ones are steer and follow-up messages being delivered.
func (m *Model) showUser(msg agent.Message) {
	text := msg.Text()
	if p := m.prompt; p != nil && !p.userSeen {
		p.userSeen = true
		if !p.attached && text == p.message {
			return
		}
		if p.attached {
			m.cutHistory(msg)
		}
	} else {
		m.takeSent("", text) // delivered before a read listed it
	}
	m.entries = append(m.entries, entry{kind: entryUser, text: text})
}

// messageThinking joins the message's thinking blocks.
func messageThinking(msg agent.Message) string {
	var parts []string
	for _, b := range msg.Content {
		if b.Type == agent.BlockThinking && b.Text != "" {
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

// retryEvent shows auto_retry_start (the countdown; Esc sends
// abort_retry) and auto_retry_end, of a prompt's model call or of a
// manual compaction's summary call.
func (m *Model) retryEvent(e agent.Event) tea.Cmd {
	switch e.Type {
	case agent.EventAutoRetryStart:
		wake := retryBase(e, m.now()).Add(time.Duration(e.DelayMs) * time.Millisecond)
		m.retry = &retryWait{attempt: e.Attempt, max: e.MaxAttempts, wake: wake}
	case agent.EventAutoRetryEnd:
		m.retry = nil
		if e.Success {
			m.note(e.String()) // "Retry succeeded on attempt N", as the CLI prints
		} else {
			m.errorf("%s", e.String()) // "Retry failed after N attempts: <finalError>"
		}
	}
	return nil
}

// toolNames names the running calls for the status line: "bash", "bash
// and read", "bash, read and 2 more".
func toolNames(tools []runningTool) string {
	var names []string
	for _, t := range tools {
		if t.name != "" && !slices.Contains(names, t.name) {
			names = append(names, t.name)
		}
	}
	switch {
	case len(names) == 0:
		return "a tool"
	case len(names) == 1:
		return names[0]
	case len(names) == 2:
		return names[0] + " and " + names[1]
	}
	return fmt.Sprintf("%s, %s and %d more", names[0], names[1], len(names)-2)
}
