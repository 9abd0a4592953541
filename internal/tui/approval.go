package tui

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/toolview"
)

// Tool approval (docs/tui.md "Tool approval"): a tool_approval_request
// puts the call in m.approvals, and the first is asked about in place of
// the input box until it is decided, here (approve_tool) or elsewhere.

// approvalArgLines bounds the argument lines the question shows.
const approvalArgLines = 12

// approvalPrompt is a tool call waiting for approval.
type approvalPrompt struct {
	callID, toolName string
	// why names the policy rule that asked ("" without a policy); scope
	// what "allow for this session" allows.
	why, scope string
	// seq is the tool_approval_request's seq: a state read at or after it
	// that does not list the call means it was decided elsewhere.
	seq int64
	// args are the event's (string values shortened to a preview); full
	// are the call's arguments as stored in the session, when read.
	args, full json.RawMessage
	// denying: n was pressed and the reason is being typed; sending: the
	// decision is on its way.
	denying, sending bool
}

// Messages of approvals.
type (
	// fullArgsMsg carries a call's arguments read from the session.
	fullArgsMsg struct {
		callID string
		args   json.RawMessage
	}
	// approvalSentMsg is the outcome of an approve_tool update.
	approvalSentMsg struct {
		callID, toolName string
		approved         bool
		reason           string
		session          bool // allowed for the session
		err              error
	}
	// stateMsg is a state read (/state, or after a failed decision).
	stateMsg struct {
		st   agent.State
		err  error
		show bool // /state: show it
	}
)

// newReasonInput is the input of a denial's reason (no length limit).
func newReasonInput() textinput.Model {
	in := textinput.New()
	in.Prompt = "reason> "
	in.Placeholder = "optional; enter denies, backspace on empty goes back"
	return in
}

// approval returns the call being asked about (nil: none).
func (m *Model) approval() *approvalPrompt {
	if len(m.approvals) == 0 {
		return nil
	}
	return m.approvals[0]
}

// approvalRequested applies tool_approval_request: the call joins the
// queue (once), and its full arguments are read from the session.
func (m *Model) approvalRequested(e agent.Event) tea.Cmd {
	if e.ToolCallID == "" || m.endedTools[e.ToolCallID] || m.startedTools[e.ToolCallID] {
		return nil
	}
	if slices.ContainsFunc(m.approvals, func(a *approvalPrompt) bool { return a.callID == e.ToolCallID }) {
		return nil
	}
	m.approvals = append(m.approvals, &approvalPrompt{callID: e.ToolCallID, toolName: e.ToolName, why: e.Why, scope: e.SessionScope, seq: e.Seq, args: e.Args})
	t := m.toolEntry(e.ToolCallID, e.ToolName)
	t.waiting = true
	return m.readFullArgs(e.ToolCallID)
}

// readFullArgs looks the call up in the session's messages: the event's
// arguments are a preview (long strings shortened), and the person
// deciding should see what will run.
func (m *Model) readFullArgs(callID string) tea.Cmd {
	return m.fromMessages(func(msg agent.Message) tea.Msg {
		for _, tc := range msg.ToolCalls() {
			if tc.ID == callID && len(tc.Arguments) > 0 {
				return fullArgsMsg{callID: callID, args: tc.Arguments}
			}
		}
		return nil
	})
}

// approvalDecided drops a call from the queue: it was decided (here or
// elsewhere), skipped, or its prompt ended.
func (m *Model) approvalDecided(callID string) {
	for i, a := range m.approvals {
		if a.callID == callID {
			m.approvals = append(m.approvals[:i], m.approvals[i+1:]...)
			if i == 0 {
				m.reason.Reset()
				m.reason.Blur()
			}
			if t := m.findTool(callID); t != nil {
				t.waiting = false
			}
			return
		}
	}
}

// approvalKey handles a key while a call is asked about.
func (m *Model) approvalKey(a *approvalPrompt, msg tea.KeyMsg) tea.Cmd {
	if a.sending {
		return nil
	}
	if a.denying {
		switch msg.Type {
		case tea.KeyEnter:
			return m.decide(a, false, strings.TrimSpace(m.reason.Value()), "")
		case tea.KeyBackspace:
			if m.reason.Value() == "" {
				a.denying = false
				m.reason.Blur()
				return nil
			}
		}
		var cmd tea.Cmd
		m.reason, cmd = m.reason.Update(msg)
		return cmd
	}
	switch msg.String() {
	case "y", "Y":
		return m.decide(a, true, "", "")
	case "a", "A":
		return m.decide(a, true, "", agent.ApprovalScopeSession)
	case "n", "N":
		a.denying = true
		m.reason.Reset()
		return m.reason.Focus()
	}
	return nil
}

// decide sends the approve_tool update for a (scope: "" or
// agent.ApprovalScopeSession).
func (m *Model) decide(a *approvalPrompt, approved bool, reason, scope string) tea.Cmd {
	a.sending = true
	b := m.backend
	p := agent.ApproveToolPayload{ToolCallID: a.callID, Approved: approved, Reason: reason, Scope: scope}
	name := a.toolName
	return m.call(func(ctx context.Context) tea.Msg {
		err := b.ApproveTool(ctx, p)
		return approvalSentMsg{callID: p.ToolCallID, toolName: name, approved: approved, reason: reason,
			session: scope == agent.ApprovalScopeSession, err: err}
	})
}

// approvalSent shows the outcome of a decision. A refused one (the call
// was decided elsewhere, or the prompt ended) makes the chat read the
// state, which drops the calls no longer waiting.
func (m *Model) approvalSent(msg approvalSentMsg) tea.Cmd {
	if msg.err != nil {
		for _, a := range m.approvals {
			if a.callID == msg.callID {
				a.sending, a.denying = false, false
				m.reason.Blur()
			}
		}
		m.errorf("approve_tool %s: %s", msg.callID, line.First(msg.err.Error()))
		return m.readState(false)
	}
	m.approvalDecided(msg.callID)
	text := fmt.Sprintf("Denied %s %s.", msg.toolName, msg.callID)
	switch {
	case msg.approved && msg.session:
		text = fmt.Sprintf("Approved %s %s, and its like for the rest of the session.", msg.toolName, msg.callID)
	case msg.approved:
		text = fmt.Sprintf("Approved %s %s.", msg.toolName, msg.callID)
	case msg.reason != "":
		text = fmt.Sprintf("Denied %s %s: %s", msg.toolName, msg.callID, msg.reason)
	}
	m.note(text)
	return nil
}

// readState reads the session state; show puts it in the list (/state).
func (m *Model) readState(show bool) tea.Cmd {
	b := m.backend
	return m.call(func(ctx context.Context) tea.Msg {
		st, err := b.State(ctx)
		return stateMsg{st: st, err: err, show: show}
	})
}

// stateRead applies a state read: the calls it no longer lists as
// waiting (among those requested at or before its seq) were decided
// elsewhere.
func (m *Model) stateRead(msg stateMsg) {
	if msg.err != nil {
		if msg.show {
			m.errorf("state: %s", line.First(msg.err.Error()))
		}
		return
	}
	if msg.show {
		var b strings.Builder
		toolview.WriteState(&b, msg.st, time.Now())
		m.note(strings.TrimSuffix(b.String(), "\n"))
	}
	waiting := map[string]bool{}
	if msg.st.Status == agent.StatusRunning {
		for _, p := range msg.st.PendingApprovals {
			waiting[p.ToolCallID] = true
		}
	}
	for _, a := range append([]*approvalPrompt(nil), m.approvals...) {
		if a.seq <= msg.st.LastSeq && !waiting[a.callID] && !a.sending {
			m.approvalDecided(a.callID)
		}
	}
}

// approvalView draws the question about a, in place of the input box.
func (m *Model) approvalView(a *approvalPrompt) string {
	room := lineRoom(m.width, 2)
	head := toolStyle.Render("?") + " " + approveStyle.Render("Approve "+a.toolName) + noteStyle.Render(" "+a.callID)
	if n := len(m.approvals); n > 1 {
		head += noteStyle.Render(fmt.Sprintf("  (1 of %d waiting)", n))
	}
	lines := []string{head}
	if a.why != "" {
		lines = append(lines, noteStyle.Render("  asked by "+line.Cut(a.why, room)))
	}
	args, shortened := a.full, false
	if len(args) == 0 {
		args, shortened = a.args, true
	}
	for _, l := range argLines(args, approvalArgLines) {
		lines = append(lines, "  "+line.Cut(l, room))
	}
	if shortened && bytes.Contains(a.args, []byte("… (")) {
		lines = append(lines, noteStyle.Render("  (long values shortened: the session file has the whole call)"))
	}
	switch {
	case a.sending:
		lines = append(lines, statusStyle.Render("Sending the decision…"))
	case a.denying:
		lines = append(lines, statusStyle.Render("Deny: why? (optional, the model sees it)"), m.reason.View())
	default:
		lines = append(lines, statusStyle.Render("y: approve · n: deny (with an optional reason) · a: allow for this session"))
		if a.scope != "" {
			lines = append(lines, noteStyle.Render("  a allows "+line.Cut(a.scope, room)))
		}
	}
	return inputStyle.Width(m.width).Render(strings.Join(lines, "\n"))
}

// argLines shows a call's arguments as a person reads them: a command as
// it will run ("$ ..."), then each other argument as "key: value", a
// multi-line string under its key; at most n lines. Arguments that are
// not an object show as they are.
func argLines(args json.RawMessage, n int) []string {
	var fields map[string]any
	var lines []string
	if json.Unmarshal(args, &fields) != nil || fields == nil {
		lines = toolview.Lines(string(args))
	} else {
		first := []string{"path", "command"} // what a person looks at first, command on top
		keys := slices.SortedFunc(maps.Keys(fields), func(a, b string) int {
			return cmp.Or(cmp.Compare(slices.Index(first, b), slices.Index(first, a)), strings.Compare(a, b))
		})
		for _, k := range keys {
			s, text := fields[k].(string)
			switch {
			case text && k == "command":
				lines = append(lines, toolview.Lines("$ "+s)...)
			case text && strings.Contains(s, "\n"):
				lines = append(lines, k+":")
				for _, l := range toolview.Lines(s) {
					lines = append(lines, "  "+l)
				}
			case text:
				lines = append(lines, k+": "+s)
			default:
				b, _ := json.Marshal(fields[k])
				lines = append(lines, k+": "+string(b))
			}
		}
	}
	if len(lines) > n {
		more := len(lines) - n + 1
		lines = append(lines[:n-1:n-1], fmt.Sprintf("… (%d more lines)", more))
	}
	return lines
}
