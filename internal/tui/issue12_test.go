package tui

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/rpcserver/rpcfake"
	"github.com/durableagent/durableagent/retry"
)

// runes types text without pressing Enter.
func (d *driver) runes(text string) { d.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(text)}) }

// ownUser is the user message_end of the prompt the fake started last,
// as the workflow emits it (the stored message, with its timestamp).
func ownUser(t *testing.T, fake *rpcfake.Backend) agent.Event {
	t.Helper()
	msgs, err := fake.Messages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agent.RoleUser {
			return agent.Event{Type: agent.EventMessageEnd, EntryID: "u1", Message: &msgs[i]}
		}
	}
	t.Fatal("the fake stored no user message")
	return agent.Event{}
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
// event's are a preview): y approves, n asks for a reason and Enter
// denies with it. Other keys do not decide anything.
func TestModel_ApprovalYesThenNoWithReason(t *testing.T) {
	d := newLiveDriver(t)
	long := strings.Repeat("x", 240) + "\nSECOND LINE OF THE NOTE"
	full, _ := json.Marshal(map[string]string{"path": "note.txt", "content": long})
	d.emit(ownUser(t, d.fake), agent.Event{Type: agent.EventAgentStart},
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
	if calls := d.fake.Calls(); len(calls) != 1 || d.m.input.Value() != "" {
		t.Fatalf("x and Enter on the question: calls %v, input %q; want nothing sent or typed", calls, d.m.input.Value())
	}

	d.runes("y")
	d.untilScreen("Approved bash call_1.")
	d.untilScreen("SECOND LINE OF THE NOTE") // the write's whole content, from the session
	d.shows("second asked", []string{"Approve write call_2", "path: note.txt", "content:"}, []string{"(1 of 2 waiting)", "Approve bash"})

	d.runes("n")
	d.untilScreen("Deny: why?")
	d.runes("not now")
	d.key(tea.KeyEnter)
	d.untilScreen("Denied write call_2: not now")
	want := []string{"prompt:hello", "approve_tool:call_1:true:", "approve_tool:call_2:false:not now"}
	if calls := d.fake.Calls(); !slices.Equal(calls, want) {
		t.Errorf("backend calls = %v, want %v", calls, want)
	}
	d.emit(toolStarted("call_1", "bash"), toolStarted("call_2", "write"))
	d.shows("decided", []string{"enter: steer · alt+enter: follow-up"}, []string{"Approve ", "waiting for approval"})
}

// n then Backspace on an empty reason goes back to the question; n and
// Enter denies without a reason.
func TestModel_ApprovalDenyWithoutReasonAndBack(t *testing.T) {
	d := newLiveDriver(t)
	d.emit(approvalRequest("call_1", "bash", `{"command":"make deploy"}`))
	d.runes("n")
	d.key(tea.KeyBackspace)
	d.shows("back", []string{"y: approve · n: deny"}, []string{"Deny: why?"})
	d.runes("n")
	d.key(tea.KeyEnter)
	d.untilScreen("Denied bash call_1.")
	if calls := d.fake.Calls(); !slices.Equal(calls, []string{"prompt:hello", "approve_tool:call_1:false:"}) {
		t.Errorf("backend calls = %v", calls)
	}
}

// Issue 22: the question names the policy rule that asked, and a
// approves the call for the rest of the session (approve_tool with scope
// session).
func TestModel_ApprovalAllowForSession(t *testing.T) {
	d := newLiveDriver(t)
	req := approvalRequest("call_1", "bash", `{"command":"git push"}`)
	req.Policy, req.Why = "ask", `rule 1 "ask bash prefix:git push"`
	d.emit(req)
	d.shows("asked", []string{"Approve bash call_1", `asked by rule 1 "ask bash prefix:git push"`, "a: allow for this session"}, nil)
	d.runes("a")
	d.untilScreen("Approved bash call_1, and its like for the rest of the session.")
	if calls := d.fake.Calls(); !slices.Equal(calls, []string{"prompt:hello", "approve_tool:call_1:true::scope=session"}) {
		t.Errorf("backend calls = %v", calls)
	}
}

// Esc keeps its bindings while a call waits for approval: abort_retry
// during a backoff, abort otherwise; the question stays.
func TestModel_EscWhileApprovalPending(t *testing.T) {
	d := newLiveDriver(t)
	d.emit(approvalRequest("call_1", "bash", `{"command":"ls"}`),
		agent.Event{Type: agent.EventAutoRetryStart, Attempt: 1, MaxAttempts: 3, DelayMs: 30000, ErrorMessage: "overloaded"})
	d.shows("both", []string{"Approve bash call_1", "Retrying (1/3) in 30s… (esc to cancel)"}, nil)
	d.key(tea.KeyEsc)
	d.until("abort_retry", func() bool { return slices.Contains(d.fake.Calls(), "abort_retry") })
	d.emit(agent.Event{Type: agent.EventAutoRetryEnd, Attempt: 1, FinalError: retry.CancelledMessage})
	d.shows("retry cancelled", []string{"Approve bash call_1", "Waiting for your approval… (esc to abort)"}, nil)
	d.key(tea.KeyEsc)
	d.until("abort", func() bool { return slices.Contains(d.fake.Calls(), "abort") })
	if calls := d.fake.Calls(); !slices.Equal(calls, []string{"prompt:hello", "abort_retry", "abort"}) {
		t.Errorf("backend calls = %v, want abort_retry then abort, no approve_tool", calls)
	}
	d.emit(agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusAborted})
	d.shows("aborted", []string{"Prompt aborted.", "Message, or /help"}, []string{"Approve bash"})
}

// A call decided elsewhere leaves the screen: by its tool_execution_start,
// or, when y is refused because another client decided it, by the state
// read after the refusal, which no longer lists it.
func TestModel_ApprovalDecidedElsewhere(t *testing.T) {
	d := newLiveDriver(t)
	d.emit(approvalRequest("call_1", "bash", `{"command":"ls"}`), approvalRequest("call_2", "bash", `{"command":"pwd"}`))
	d.emit(toolStarted("call_1", "bash"))
	d.shows("started elsewhere", []string{"Approve bash call_2"}, []string{"Approve bash call_1", "1 of 2"})

	// Another client approves call_2; y here is refused, and the state
	// read after it shows the call is no longer waiting.
	if err := d.fake.ApproveTool(context.Background(), agent.ApproveToolPayload{ToolCallID: "call_2", Approved: true}); err != nil {
		t.Fatal(err)
	}
	d.runes("y")
	d.untilScreen("approve_tool call_2: approve_tool call_2 in session s1: tool call call_2 is not waiting for approval")
	d.until("question gone", func() bool { return d.m.approval() == nil })
	if !strings.Contains(d.m.View(), "enter: steer") {
		t.Errorf("the input is not back:\n%s", d.m.View())
	}
}

// Issue 12: while a prompt runs Enter steers it and Alt+Enter (or
// /followup) queues a follow-up; queued messages show until their user
// message_end delivers them; those the prompt ends without delivering go
// back into the input.
func TestModel_SteerAndFollowUp(t *testing.T) {
	d := newLiveDriver(t)
	d.emit(ownUser(t, d.fake), agent.Event{Type: agent.EventAgentStart})
	d.typeLine("look at main.go first")
	d.runes("then write tests")
	d.send(tea.KeyMsg{Type: tea.KeyEnter, Alt: true})
	d.typeLine("/followup and update the docs")
	d.typeLine("/steer")
	d.untilScreen("usage: /steer TEXT")
	d.shows("queued", []string{"Steering: look at main.go first", "Follow-up: then write tests", "Follow-up: and update the docs"}, nil)
	d.until("sent", func() bool { return len(d.fake.Calls()) == 4 })
	want := []string{"prompt:hello", "steer:look at main.go first", "follow_up:then write tests", "follow_up:and update the docs"}
	if calls := d.fake.Calls(); !slices.Equal(calls, want) {
		t.Errorf("backend calls = %v, want %v", calls, want)
	}

	steered := agent.TextMessage(agent.RoleUser, "look at main.go first")
	d.emit(agent.Event{Type: agent.EventTurnStart, Turn: 2}, agent.Event{Type: agent.EventMessageEnd, EntryID: "u2", Message: &steered})
	d.shows("steer delivered", []string{"› look at main.go first", "Follow-up: then write tests"}, []string{"Steering: look at main.go first"})

	d.emit(agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusAborted})
	d.shows("ended", []string{"Not delivered before the prompt ended: then write tests · and update the docs"}, []string{"Follow-up:"})
	if got := d.m.input.Value(); got != "then write tests and update the docs" {
		t.Errorf("input after the prompt ended = %q, want the undelivered follow-ups", got)
	}
}

// A steer that the backend refuses (the prompt ended meanwhile) is an
// error line, and its text goes back to the input.
func TestModel_SteerRefused(t *testing.T) {
	d := newLiveDriver(t)
	d.until("following", func() bool { return d.m.prompt != nil })
	d.run.Emit(agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusCompleted}) // the fake is idle; the chat has not seen it yet
	d.typeLine("too late")
	d.untilScreen("steer: no running prompt in session s1")
	d.until("input restored", func() bool { return d.m.input.Value() == "too late" })
}

// playPrompt runs one prompt on the fake to its end: the user message, an
// answer with a bash call, the call's result, the final answer.
func playPrompt(t *testing.T, fake *rpcfake.Backend, text string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := fake.StartPrompt(ctx, text); err != nil {
		t.Fatal(err)
	}
	run, err := fake.Started(ctx)
	if err != nil {
		t.Fatal(err)
	}
	result := agent.TextMessage(agent.RoleToolResult, "main.go\ngo.mod")
	result.ToolCallID, result.ToolName = "call_1_0", "bash"
	for _, e := range []agent.Event{ownUser(t, fake), {Type: agent.EventAgentStart},
		answer("a1", toolCallsAnswer(agent.ToolCall{ID: "call_1_0", Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)})),
		{Type: agent.EventMessageEnd, EntryID: "r1", Message: &result},
		answer("a2", textAnswer("There are two files.")),
		{Type: agent.EventAgentEnd}, {Type: agent.EventPromptEnd, Status: agent.StatusCompleted}} {
		run.Emit(e)
	}
}

// Issue 12: a chat opened on a session shows its earlier messages: user
// messages, answers, tool calls with their results.
func TestModel_ReopenShowsHistory(t *testing.T) {
	fake := rpcfake.New("s1")
	playPrompt(t, fake, "list the files")
	d := newDriver(t, fake)
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
// prompt's events from its start, each message once (its messages are in
// the session file and in the replay).
func TestModel_ReopenWhileRunningShowsEachMessageOnce(t *testing.T) {
	fake := rpcfake.New("s1")
	playPrompt(t, fake, "list the files")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := fake.StartPrompt(ctx, "now run the tests"); err != nil {
		t.Fatal(err)
	}
	run, err := fake.Started(ctx)
	if err != nil {
		t.Fatal(err)
	}
	run.Emit(ownUser(t, fake))
	run.Emit(agent.Event{Type: agent.EventAgentStart})
	run.Emit(answer("a3", toolCallsAnswer(agent.ToolCall{ID: "call_1_0", Name: "bash", Arguments: json.RawMessage(`{"command":"go test ./..."}`)})))
	run.Emit(approvalRequest("call_1_0", "bash", `{"command":"go test ./..."}`))
	d := newDriver(t, fake)
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
	d.runes("y")
	d.until("approved", func() bool { return slices.Contains(fake.Calls(), "approve_tool:call_1_0:true:") })
	run.Emit(toolStarted("call_1_0", "bash"))
	run.Emit(agent.Event{Type: agent.EventToolExecutionEnd, ToolCallID: "call_1_0", ToolName: "bash",
		ToolResult: &agent.ToolResult{Content: []agent.ContentBlock{{Type: "text", Text: "ok all passed"}}}})
	d.untilScreen("✓ bash go test ./...")
	if !strings.Contains(d.m.View(), "✓ bash ls") || !strings.Contains(d.m.View(), "  ok all passed") {
		t.Errorf("the results went to the wrong call:\n%s", d.m.View())
	}
}

// Issue 23 (nothing typed is lost): a steer typed while a retry waits
// that the prompt hands back when the retry is cancelled goes back into
// the input with prompt_end's reason; one another client sent is shown
// with its kind and reason.
func TestModel_HandedBackSteerReturnsWithItsReason(t *testing.T) {
	d := newLiveDriver(t)
	d.emit(ownUser(t, d.fake), agent.Event{Type: agent.EventAgentStart})
	d.typeLine("use the other file")
	d.until("sent", func() bool { return len(d.fake.Calls()) == 2 })
	d.emit(agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusFailed, ErrorMessage: retry.CancelledMessage + " (last error: 503)",
		UndeliveredMessages: []agent.UndeliveredMessage{
			{Kind: agent.SignalSteer, Text: "use the other file", Reason: "retry cancelled"},
			{Kind: agent.SignalFollowUp, Text: "and from elsewhere", Reason: "retry cancelled"},
		}})
	// The prompt's end is shown first; the handing back may come in a
	// later message (a loaded CI run read the screen in between).
	d.untilScreen("Not delivered (retry cancelled): use the other file (back in the input)")
	d.shows("handed back", []string{"Not delivered (retry cancelled): use the other file (back in the input)",
		"Not delivered (follow-up from another client, retry cancelled): and from elsewhere"}, []string{"Steering:"})
	if got := d.m.input.Value(); got != "use the other file" {
		t.Errorf("input after the prompt ended = %q, want the handed-back steer", got)
	}
}
