package cli

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

func outputUpdate(callID, out string) agent.Event {
	return agent.Event{Type: agent.EventToolExecutionUpdate, ToolCallID: callID, ToolName: "bash",
		PartialResult: &agent.ToolResult{Content: []agent.ContentBlock{{Type: agent.BlockText, Text: out}}}}
}

func userEnd(text string) agent.Event {
	m := agent.TextMessage(agent.RoleUser, text)
	return agent.Event{Type: agent.EventMessageEnd, Message: &m}
}

// Issue 23: `starter prompt` and `events --follow` print a running
// command's output as it comes (each line once, a partial line when it
// is whole), then how it ended without printing the output again; every
// assistant message prints, the one before a tool call too; a steer or
// follow-up prints when it is delivered, the prompt's own message not
// (the user just typed it).
func TestPrinter_TranscriptLiveOutputSteersEveryMessage(t *testing.T) {
	var out bytes.Buffer
	p := newPrinter(&out, false, "s1")
	p.skipFirstUser = true
	p.noCountdown = true
	running := agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonToolUse, Content: []agent.ContentBlock{
		{Type: agent.BlockText, Text: "Running the tests."},
		{Type: agent.BlockToolCall, ToolCall: &agent.ToolCall{ID: "c1", Name: "bash", Arguments: json.RawMessage(`{"command":"go test ./..."}`)}},
	}}
	final := textAnswerMsg("Two packages pass; one fails.")
	for _, e := range []agent.Event{
		userEnd("run the tests"),
		{Type: agent.EventMessageEnd, EntryID: "e2", Message: &running},
		{Type: agent.EventToolExecutionStart, ToolCallID: "c1", ToolName: "bash", Args: json.RawMessage(`{"command":"go test ./..."}`)},
		outputUpdate("c1", "ok  \tpkg/one\nok  \tpkg/tw"),
		outputUpdate("c1", "ok  \tpkg/one\nok  \tpkg/two\n"),
		userEnd("also run vet"),
		outputUpdate("c1", "ok  \tpkg/one\nok  \tpkg/two\nFAIL\tpkg/three\n"),
		endOf("c1", toolEnd("e3", "bash", "ok  \tpkg/one\nok  \tpkg/two\nFAIL\tpkg/three\nFAIL\n\nCommand exited with code 1", true)),
		{Type: agent.EventMessageEnd, EntryID: "e4", Message: &final},
	} {
		p.print(e)
	}
	want := "Running the tests.\n" +
		"▶ bash go test ./...\n" +
		"  │ ok  \tpkg/one\n" +
		"  │ ok  \tpkg/two\n" +
		"› also run vet\n" +
		"  │ FAIL\tpkg/three\n" +
		"  │ FAIL\n" +
		"  ✗ bash: Command exited with code 1\n" +
		"Two packages pass; one fails.\n"
	if got := out.String(); got != want {
		t.Fatalf("printed\n%s\nwant\n%s", got, want)
	}
	if !p.lastStreamed {
		t.Fatal("the last answer printed at its message_end, yet follow would print it again")
	}
}

// A snapshot that moved on (it holds the latest 8 KB) continues after the
// last line printed; when that line is gone the gap is marked.
func TestPrinter_LiveOutputAcrossMovingSnapshots(t *testing.T) {
	var out bytes.Buffer
	p := newPrinter(&out, false, "s1")
	p.print(outputUpdate("c1", "a\nb\n"))
	p.print(outputUpdate("c1", "b\nc\n"))
	p.print(outputUpdate("c1", "x\ny\n"))
	if got, want := out.String(), "  │ a\n  │ b\n  │ c\n  │ …\n  │ x\n  │ y\n"; got != want {
		t.Fatalf("printed %q, want %q", got, want)
	}
}

func textAnswerMsg(text string) agent.Message {
	m := agent.TextMessage(agent.RoleAssistant, text)
	m.StopReason = agent.StopReasonStop
	return m
}

// endOf is e as the end of call callID.
func endOf(callID string, e agent.Event) agent.Event {
	e.ToolCallID = callID
	return e
}

// Issue 23: a prompt the user stopped reads "aborted" whether abort or
// abort_retry stopped it (the event says failed for abort_retry, Temporal
// Canceled for both); a real failure still reads failed.
func TestPrinter_UserStopIsAborted(t *testing.T) {
	for _, tc := range []struct {
		end  agent.Event
		want string
	}{
		{agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusFailed, ErrorMessage: "Retry cancelled (last error: 503 Service Unavailable)"},
			"prompt aborted: Retry cancelled (last error: 503 Service Unavailable)\n"},
		{agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusFailed, ErrorMessage: "Retry cancelled (last error: 503 Service Unavailable)",
			Undelivered: []string{"use b.go", "then say\nbye"}, UndeliveredMessages: []agent.UndeliveredMessage{
				{Kind: agent.SignalSteer, Text: "use b.go", Reason: "retry cancelled"},
				{Kind: agent.SignalFollowUp, Text: "then say\nbye", Reason: "retry cancelled"}}},
			"prompt aborted: Retry cancelled (last error: 503 Service Unavailable)\n" +
				"not delivered (steer, retry cancelled): use b.go\nnot delivered (follow-up, retry cancelled): then say ⏎ bye\n"},
		{agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusAborted}, "prompt aborted\n"},
		{agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusFailed, ErrorMessage: "401 invalid x-api-key"}, "prompt failed: 401 invalid x-api-key\n"},
	} {
		var out bytes.Buffer
		p := newPrinter(&out, false, "s1")
		p.print(tc.end)
		printUndelivered(&out, tc.end)
		if out.String() != tc.want {
			t.Errorf("printed %q, want %q", out.String(), tc.want)
		}
	}
}

// Issue 39 items 6 and 7: a provider's error prints once, on one line,
// its JSON body read (--full: the raw text); a call waiting for approval
// shows its command as written and the approve command with the real
// session id.
func TestPrinter_ModelErrorOnceAndApprovalHint(t *testing.T) {
	raw := `POST "https://api.anthropic.com/v1/messages": 400 Bad Request {"type":"error","error":{"type":"invalid_request_error","message":"messages.1: unexpected tool_use_id"},"request_id":"req_1"}`
	evs := []agent.Event{
		{Type: agent.EventAgentEnd, StopReason: agent.StopReasonError, ErrorMessage: raw},
		{Type: agent.EventPromptEnd, Status: agent.StatusFailed, ErrorMessage: raw},
	}
	for _, tc := range []struct {
		full bool
		want string
	}{
		{false, "✗ model error: 400 Bad Request: invalid_request_error: messages.1: unexpected tool_use_id\nprompt failed\n"},
		{true, "✗ model error: " + raw + "\nprompt failed\n"},
	} {
		var out bytes.Buffer
		p := newPrinter(&out, false, "s1")
		p.full = tc.full
		for _, e := range evs {
			p.print(e)
		}
		if out.String() != tc.want {
			t.Errorf("full %t: printed %q, want %q", tc.full, out.String(), tc.want)
		}
	}

	var out bytes.Buffer
	newPrinter(&out, false, "job-7").print(agent.Event{Type: agent.EventToolApprovalRequest, ToolName: "bash", ToolCallID: "call_1",
		Args: []byte(`{"command":"echo \"a b\" | grep 'a'"}`), Why: `rule 1 "ask bash"`})
	want := "? waiting for approval: bash echo \"a b\" | grep 'a' (call_1), asked by rule 1 \"ask bash\"\n  starter approve --session job-7 call_1 [--deny | --for-session]\n"
	if out.String() != want {
		t.Errorf("approval printed %q, want %q", out.String(), want)
	}
}
