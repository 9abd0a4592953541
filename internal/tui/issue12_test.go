package tui

import (
	"encoding/json"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
)

// runes types text without pressing Enter.
func (d *driver) runes(text string) { d.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(text)}) }

// ownUser is the user message_end of the prompt started here ("hello"),
// as the workflow emits it.
func ownUser() agent.Event {
	msg := agent.TextMessage(agent.RoleUser, "hello")
	return agent.Event{Type: agent.EventMessageEnd, EntryID: "u1", Message: &msg}
}

func toolCallsAnswer(calls ...agent.ToolCall) agent.Message {
	msg := agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonToolUse}
	for i := range calls {
		msg.Content = append(msg.Content, agent.ContentBlock{Type: "toolCall", ToolCall: &calls[i]})
	}
	return msg
}

func approvalRequest(id, name, args string) agent.Event {
	return agent.Event{Type: agent.EventToolApprovalRequest, ToolCallID: id, ToolName: name, Args: json.RawMessage(args)}
}

func toolStarted(id, name string) agent.Event {
	return agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: id, ToolName: name}
}

// Issue 12: tool calls waiting for approval are asked about one at a time,
// in order, with their arguments (read whole from the session when the
// event's are a preview). Other keys than y, n and a decide nothing. (y
// and n reach the prompt: TestServer_ApprovalsDenyAllowAndAbort.)
func TestModel_ApprovalsAskedInOrderWithWholeArguments(t *testing.T) {
	d := newLiveDriver(t)
	long := strings.Repeat("x", 240) + "\nSECOND LINE OF THE NOTE"
	full, _ := json.Marshal(map[string]string{"path": "note.txt", "content": long})
	d.emit(ownUser(), agent.Event{Type: agent.EventAgentStart},
		answer("a1", toolCallsAnswer(
			agent.ToolCall{ID: "call_1", Name: "bash", Arguments: json.RawMessage(`{"command":"rm -rf build"}`)},
			agent.ToolCall{ID: "call_2", Name: "write", Arguments: full})),
		approvalRequest("call_1", "bash", `{"command":"rm -rf build"}`),
		approvalRequest("call_2", "write", `{"content":"xxxx… (264 bytes)","path":"note.txt"}`))
	d.shows("two waiting", []string{"Approve bash call_1", "$ rm -rf build", "(1 of 2 waiting)", "y: approve · n: deny",
		"▶ bash rm -rf build (waiting for approval)"}, []string{"Approve write"})
	if n := strings.Count(d.m.View(), "› hello"); n != 1 {
		t.Errorf("the prompt's own message shows %d times, want once:\n%s", n, d.m.View())
	}
	d.runes("x")
	d.key(tea.KeyEnter)
	if d.m.input.Value() != "" || d.m.approval() == nil || d.m.approval().callID != "call_1" {
		t.Fatalf("x and Enter on the question: input %q; want nothing typed and call_1 still asked", d.m.input.Value())
	}
	d.emit(toolStarted("call_1", "bash"))    // decided
	d.untilScreen("SECOND LINE OF THE NOTE") // the write's whole content, from the session
	d.shows("second asked", []string{"Approve write call_2", "path: note.txt", "content:"}, []string{"(1 of 2 waiting)", "Approve bash"})
	d.emit(toolStarted("call_2", "write"))
	d.shows("decided", []string{"enter: steer · alt+enter: follow-up"}, []string{"Approve ", "waiting for approval"})
}

// n then Backspace on an empty reason goes back to the question. (n and
// Enter deny: TestServer_ApprovalsDenyAllowAndAbort.)
func TestModel_ApprovalDenyBackToTheQuestion(t *testing.T) {
	d := newLiveDriver(t)
	d.emit(approvalRequest("call_1", "bash", `{"command":"make deploy"}`))
	d.runes("n")
	d.untilScreen("Deny: why?")
	d.key(tea.KeyBackspace)
	d.shows("back", []string{"y: approve · n: deny"}, []string{"Deny: why?"})
}

// Issue 22: the question names the policy rule that asked, and offers a
// (allow for the rest of the session: TestServer_ApprovalsDenyAllowAndAbort).
func TestModel_ApprovalNamesTheRule(t *testing.T) {
	d := newLiveDriver(t)
	req := approvalRequest("call_1", "bash", `{"command":"git push"}`)
	req.Policy, req.Why = "ask", `rule 1 "ask bash prefix:git push"`
	d.emit(req)
	d.shows("asked", []string{"Approve bash call_1", `asked by rule 1 "ask bash prefix:git push"`, "a: allow for this session"}, nil)
}

// Esc keeps its bindings while a call waits for approval: abort_retry
// during a backoff, abort otherwise; the question stays.
func TestModel_EscWhileApprovalPending(t *testing.T) {
	d := newLiveDriver(t)
	d.emit(approvalRequest("call_1", "bash", `{"command":"ls"}`),
		agent.Event{Type: agent.EventAutoRetryStart, Attempt: 1, MaxAttempts: 3, DelayMs: 30000, ErrorMessage: "overloaded"})
	d.shows("both", []string{"Approve bash call_1", "Retrying (1/3) in 30s… (esc to cancel)"}, nil)
	if _, esc := d.status(); esc != agent.SignalAbortRetry {
		t.Errorf("esc during the backoff is bound to %q, want abort_retry", esc)
	}
	d.emit(agent.Event{Type: agent.EventAutoRetryEnd, Attempt: 1, FinalError: "Retry cancelled"})
	d.shows("retry cancelled", []string{"Approve bash call_1", "Waiting for your approval… (esc to abort)"}, nil)
	if _, esc := d.status(); esc != agent.SignalAbort {
		t.Errorf("esc while the call waits is bound to %q, want abort", esc)
	}
	d.emit(agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusAborted})
	d.shows("aborted", []string{"Prompt aborted.", "Message, or /help"}, []string{"Approve bash"})
}

// A call decided elsewhere leaves the screen by its tool_execution_start.
func TestModel_ApprovalDecidedElsewhere(t *testing.T) {
	d := newLiveDriver(t)
	d.emit(approvalRequest("call_1", "bash", `{"command":"ls"}`), approvalRequest("call_2", "bash", `{"command":"pwd"}`))
	d.emit(toolStarted("call_1", "bash"))
	d.shows("started elsewhere", []string{"Approve bash call_2"}, []string{"Approve bash call_1", "1 of 2"})
	d.emit(toolStarted("call_2", "bash"))
	d.until("question gone", func() bool { return d.m.approval() == nil })
	if !strings.Contains(d.m.View(), "enter: steer") {
		t.Errorf("the input is not back:\n%s", d.m.View())
	}
}

// A steer that the backend refuses (here: Temporal cannot be reached) is
// an error line, and its text goes back to the input.
func TestModel_SteerRefused(t *testing.T) {
	d := newLiveDriver(t)
	d.typeLine("too late")
	d.untilScreen("steer: ")
	d.until("input restored", func() bool { return d.m.input.Value() == "too late" })
}

// playedPrompt writes one finished prompt into the session: the user
// message, an answer with a bash call, the call's result, the final
// answer.
func playedPrompt(text string) func(record func(id string, m agent.Message)) {
	return func(record func(id string, m agent.Message)) {
		result := agent.TextMessage(agent.RoleToolResult, "main.go\ngo.mod")
		result.ToolCallID, result.ToolName = "call_1_0", "bash"
		record("u0", agent.TextMessage(agent.RoleUser, text))
		record("a1", toolCallsAnswer(agent.ToolCall{ID: "call_1_0", Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)}))
		record("r1", result)
		record("a2", textAnswer("There are two files."))
	}
}

// Issue 12: a chat opened on a session shows its earlier messages: user
// messages, answers, tool calls with their results.
func TestModel_ReopenShowsHistory(t *testing.T) {
	d := newStoreDriver(t, playedPrompt("list the files"))
	screen := d.m.View()
	for _, want := range []string{"Earlier in this session:", "› list the files", "✓ bash ls", "  main.go", "  go.mod", "There are two files."} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	if strings.Contains(screen, "Attached") || strings.Index(screen, "› list the files") > strings.Index(screen, "There are two files.") {
		t.Errorf("history out of order or attached to nothing:\n%s", screen)
	}
}

// Reopened while a prompt runs: the history up to that prompt, then the
// prompt's events from its start (the start-up attach), each message once
// (its messages are in the session file and in the replay).
func TestModel_ReopenWhileRunningShowsEachMessageOnce(t *testing.T) {
	d := newStoreDriver(t, playedPrompt("list the files"))
	d.send(promptStartedMsg{prompt: client.Prompt{}, events: d.events, attached: true})
	user := agent.TextMessage(agent.RoleUser, "now run the tests")
	d.emit(agent.Event{Type: agent.EventMessageEnd, EntryID: "u3", Message: &user}, agent.Event{Type: agent.EventAgentStart},
		answer("a3", toolCallsAnswer(agent.ToolCall{ID: "call_1_0", Name: "bash", Arguments: json.RawMessage(`{"command":"go test ./..."}`)})),
		approvalRequest("call_1_0", "bash", `{"command":"go test ./..."}`))
	d.untilScreen("Approve bash call_1_0")
	screen := d.m.View()
	for _, want := range []string{"Earlier in this session:", "› list the files", "✓ bash ls", "There are two files.",
		"Attached to the prompt already running", "› now run the tests", "▶ bash go test ./... (waiting for approval)"} {
		if n := strings.Count(screen, want); n != 1 {
			t.Errorf("screen shows %q %d times, want once:\n%s", want, n, screen)
		}
	}
	if strings.Index(screen, "There are two files.") > strings.Index(screen, "› now run the tests") {
		t.Errorf("the earlier prompt is not above the running one:\n%s", screen)
	}
	// The history's call_1_0 (ls) is not the running prompt's call_1_0.
	d.emit(toolStarted("call_1_0", "bash"), agent.Event{Type: agent.EventToolExecutionEnd, ToolCallID: "call_1_0", ToolName: "bash",
		ToolResult: &agent.ToolResult{Content: []agent.ContentBlock{{Type: "text", Text: "ok all passed"}}}})
	d.untilScreen("✓ bash go test ./...")
	if !strings.Contains(d.m.View(), "✓ bash ls") || !strings.Contains(d.m.View(), "  ok all passed") {
		t.Errorf("the results went to the wrong call:\n%s", d.m.View())
	}
}
