package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/internal/toolview"
)

// Live output (docs/tui.md "Live output"): message_update and
// tool_execution_update are for display only; message_end and
// tool_execution_end replace what streamed.

// toolOutputLines bounds the output lines a tool entry shows (the latest
// while it runs, the first of its result after).
const toolOutputLines = 8

// liveMessage is the assistant message being streamed: one model call's
// attempt (live.Partial).
type liveMessage struct{ *live.Partial }

// render draws the blocks: text as it is, thinking dimmed, tool-call
// arguments as they are being written.
func (l liveMessage) render(width int) string {
	var parts []string
	for _, b := range l.Blocks() {
		text := b.Text()
		switch b.Type {
		case agent.DeltaText:
			parts = append(parts, wrap(text, width))
		case agent.DeltaThinking:
			parts = append(parts, wrap(thinkingStyle.Render(text), width))
		case agent.DeltaToolCall:
			parts = append(parts, wrap(toolStyle.Render("▶ ")+noteStyle.Render(line.Cut(toolview.OneLine(text), lineRoom(width, 2))), width))
		}
	}
	return strings.Join(parts, "\n")
}

// toolView is a tool call in the message list: announced by the
// assistant's message_end, running from tool_execution_start, its output
// tail live from tool_execution_update, finalised by tool_execution_end.
type toolView struct {
	callID string
	name   string
	args   json.RawMessage
	// running: between tool_execution_start and _end; done: after _end;
	// waiting: for approval.
	running, done, waiting bool
	isError                bool
	// output is the latest output so far (replace, not append); result
	// is the end's result text, and note what it leaves out.
	output, result, note string
}

func (t *toolView) render(width int, expanded bool) string {
	mark, style := "▶", toolStyle
	switch {
	case t.done && t.isError:
		mark, style = "✗", errorStyle
	case t.done:
		mark, style = "✓", okStyle
	}
	head := style.Render(mark) + " " + toolview.CallLine(t.name, t.args, lineRoom(width, 2))
	switch {
	case t.waiting && !t.running && !t.done:
		head += approveStyle.Render(" (waiting for approval)")
	case !t.running && !t.done:
		head += noteStyle.Render(" (pending)")
	}
	lines := []string{wrap(head, width)}
	if !t.done {
		out := toolview.Lines(t.output)
		for _, l := range out[max(len(out)-toolOutputLines, 0):] {
			lines = append(lines, noteStyle.Render("  "+line.Cut(l, lineRoom(width, 2))))
		}
		return strings.Join(lines, "\n")
	}
	view := toolview.Collapsed
	if expanded {
		view = toolview.Full
	}
	for _, l := range view(t.name, t.result, t.isError) {
		text := "  " + l.Text
		if !expanded {
			text = "  " + line.Cut(l.Text, lineRoom(width, 2))
		}
		st := noteStyle
		switch {
		case l.Kind == toolview.Added:
			st = addedStyle
		case l.Kind == toolview.Removed:
			st = removedStyle
		case l.Kind == toolview.Status && t.isError:
			st = errorStyle
		case l.Kind == toolview.Elided && !expanded:
			text += " (ctrl+o to expand)"
		}
		if expanded {
			lines = append(lines, wrap(st.Render(text), width))
		} else {
			lines = append(lines, st.Render(text))
		}
	}
	if t.note != "" {
		lines = append(lines, noteStyle.Render("  "+t.note))
	}
	return strings.Join(lines, "\n")
}

// streamDelta applies a message_update. A delta of a later attempt (or of
// another model call) drops the partial text shown so far: it belonged to
// a call that failed or ended. A delta of an earlier attempt, or of a
// message already ended, is stale and ignored.
func (m *Model) streamDelta(e agent.Event) {
	ev := e.AssistantMessageEvent
	if ev == nil || m.endedEntries[e.EntryID] {
		return
	}
	i, cur := m.liveEntry()
	if cur != nil {
		if ev.Attempt < cur.Attempt {
			return
		}
		if ev.Attempt > cur.Attempt || e.EntryID != cur.EntryID {
			m.entries = append(m.entries[:i], m.entries[i+1:]...)
			cur = nil
		}
	}
	if ev.Delta == "" {
		return
	}
	switch ev.Type {
	case agent.DeltaText, agent.DeltaThinking, agent.DeltaToolCall:
	default:
		return
	}
	if cur == nil {
		cur = &liveMessage{live.NewPartial(e.EntryID, ev.Attempt)}
		m.entries = append(m.entries, entry{kind: entryLive, live: cur})
	}
	cur.Add(*ev)
}

// liveEntry finds the streamed message in the list (-1, nil: none).
func (m *Model) liveEntry() (int, *liveMessage) {
	for i := len(m.entries) - 1; i >= 0; i-- {
		if m.entries[i].kind == entryLive {
			return i, m.entries[i].live
		}
	}
	return -1, nil
}

// replaceLive puts es where the streamed message is (dropping it), or
// after the list when nothing streamed.
func (m *Model) replaceLive(es []entry) {
	i, _ := m.liveEntry()
	if i < 0 {
		m.entries = append(m.entries, es...)
		return
	}
	rest := append(es, m.entries[i+1:]...)
	m.entries = append(m.entries[:i], rest...)
}

// toolEntry returns the tool call's view, adding it to the list when the
// call was not announced (created) yet.
func (m *Model) toolEntry(callID, name string) *toolView {
	if t := m.findTool(callID); t != nil {
		return t
	}
	t := &toolView{callID: callID, name: name}
	m.entries = append(m.entries, entry{kind: entryTool, tool: t})
	return t
}

// findTool returns the view of a call of this chat's prompts, after the
// history (ids can repeat across prompts), nil when there is none.
func (m *Model) findTool(callID string) *toolView {
	for i := len(m.entries) - 1; i >= m.historyAt+m.historyLen; i-- {
		if t := m.entries[i].tool; t != nil && t.callID == callID {
			return t
		}
	}
	return nil
}

// toolStart applies tool_execution_start: the call runs, with these
// arguments.
func (m *Model) toolStart(e agent.Event) {
	t := m.toolEntry(e.ToolCallID, e.ToolName)
	if len(e.Args) > 0 {
		t.args = e.Args
	}
	t.running, t.waiting = true, false
}

// toolUpdate applies tool_execution_update: its output so far replaces
// the last.
func (m *Model) toolUpdate(e agent.Event) {
	if e.ToolCallID == "" || m.endedTools[e.ToolCallID] {
		return
	}
	t := m.toolEntry(e.ToolCallID, e.ToolName)
	if len(t.args) == 0 && len(e.Args) > 0 {
		t.args = e.Args
	}
	t.running = true
	t.output = e.PartialResult.Text()
}

// toolEnd applies tool_execution_end: the result replaces the live
// output. The event carries a preview; when it is cut, the whole result
// is read from the session (fullResult), and until then (or when it
// cannot be read) a note says what the preview leaves out.
func (m *Model) toolEnd(e agent.Event) tea.Cmd {
	m.endedTools[e.ToolCallID] = true
	t := m.toolEntry(e.ToolCallID, e.ToolName)
	t.running, t.done, t.isError = false, true, e.IsError
	t.output, t.result, t.note = "", e.ToolResult.Text(), ""
	if e.ToolResult == nil || e.ToolResult.Details["truncated"] != true {
		return nil
	}
	t.note = "… (preview"
	switch n := e.ToolResult.Details["bytes"].(type) {
	case float64: // read from JSON
		t.note += fmt.Sprintf(" of %d bytes", int64(n))
	case int, int64:
		t.note += fmt.Sprintf(" of %d bytes", n)
	}
	if id, ok := e.ToolResult.Details["entryId"].(string); ok && id != "" {
		t.note += "; the whole output is in entry " + id
	}
	t.note += ")"
	return m.readFullResult(e.ToolCallID)
}

// fullResultMsg is a tool result's whole text, read from the session.
type fullResultMsg struct{ callID, text string }

// readFullResult looks the call's result up in the session's messages.
func (m *Model) readFullResult(callID string) tea.Cmd {
	return m.fromMessages(func(msg agent.Message) tea.Msg {
		if msg.Role == agent.RoleToolResult && msg.ToolCallID == callID {
			return fullResultMsg{callID: callID, text: msg.Text()}
		}
		return nil
	})
}

// fromMessages reads the session's messages and returns what find makes
// of the newest one it makes something of; nothing when they cannot be
// read (the preview stays).
func (m *Model) fromMessages(find func(agent.Message) tea.Msg) tea.Cmd {
	b := m.backend
	return m.call(func(ctx context.Context) tea.Msg {
		msgs, err := b.Messages(ctx)
		if err != nil {
			return nil
		}
		for i := len(msgs) - 1; i >= 0; i-- {
			if msg := find(msgs[i]); msg != nil {
				return msg
			}
		}
		return nil
	})
}

// fullResult puts a result's whole text in place of its preview.
func (m *Model) fullResult(msg fullResultMsg) {
	if t := m.findTool(msg.callID); t != nil && t.done && len(msg.text) >= len(t.result) {
		t.result, t.note = msg.text, ""
	}
}

// lineRoom is the room on a line of width after indent (no limit when the
// width is not known yet).
func lineRoom(width, indent int) int {
	if width <= 0 {
		return 1 << 20
	}
	return max(width-indent, 10)
}
