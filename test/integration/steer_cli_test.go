package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/workflows"
)

// startIn starts a prompt in session with its workspace and fault script.
func (e *env) startIn(session, ws, message string, faults ...string) {
	e.t.Helper()
	in := client.PromptInput(e.s, session, message)
	in.Workspace = ws
	in.Model.Faults = faults
	if _, err := e.k.StartPrompt(context.Background(), in); err != nil {
		e.t.Fatalf("start prompt: %v", err)
	}
}

// approvalOf waits for the tool_approval_request of the call whose
// arguments contain arg.
func (e *env) approvalOf(session, arg string) agent.Event {
	e.t.Helper()
	return e.waitEvent(session, 30*time.Second, func(ev agent.Event) bool {
		return ev.Type == agent.EventToolApprovalRequest && strings.Contains(string(ev.Args), arg)
	})
}

// ended waits for the prompt's prompt_end.
func (e *env) ended(session string) agent.Event {
	e.t.Helper()
	return e.waitEvent(session, time.Minute, isType(agent.EventPromptEnd))
}

// userTexts lists the texts of the user message_end events, in order.
func userTexts(evs []agent.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.Type == agent.EventMessageEnd && ev.Message != nil && ev.Message.Role == agent.RoleUser {
			out = append(out, ev.Message.Text())
		}
	}
	return out
}

// toolEnd finds a call's tool_execution_end.
func toolEnd(evs []agent.Event, id string) (agent.Event, bool) {
	for _, ev := range evs {
		if ev.Type == agent.EventToolExecutionEnd && ev.ToolCallID == id {
			return ev, true
		}
	}
	return agent.Event{}, false
}

func resultOf(ev agent.Event) string {
	if ev.ToolResult == nil || len(ev.ToolResult.Content) == 0 {
		return ""
	}
	return ev.ToolResult.Content[0].Text
}

// Issue 12, the CLI doors end to end: `starter state` shows the call
// waiting for approval and the queued follow-up; `starter approve` runs
// the call, `starter approve --deny --reason` gives the model an error
// result with the reason, `starter follow-up` is delivered when the loop
// would end; `starter steer` skips the call waiting and goes on with the
// steering message.
func TestIntegration_StarterSteerFollowUpApprove(t *testing.T) {
	e := newEnv(t)
	e.s.Tools.RequireApproval = []string{"bash"}
	e.startWorker()
	ws := t.TempDir()
	e.startIn("doors", ws, "make two files",
		`tools:[{"name":"bash","arguments":{"command":"echo one > one.txt"}},{"name":"bash","arguments":{"command":"echo two > two.txt"}}]`,
		`text:first done`, `text:after the follow-up`)
	first := e.approvalOf("doors", "one.txt")

	code, out, stderr := e.starter("follow-up", "--session", "doors", "and then summarize")
	if code != cli.ExitOK || !strings.Contains(out, "sent follow_up to session doors") {
		t.Fatalf("follow-up: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = e.starter("state", "--session", "doors")
	for _, want := range []string{"pendingMessageCount 1",
		"waiting for approval: bash echo one > one.txt (" + first.ToolCallID + ")",
		"starter approve --session doors " + first.ToolCallID + " [--deny --reason TEXT]"} {
		if code != cli.ExitOK || !strings.Contains(out, want) {
			t.Errorf("state: exit %d, output lacks %q:\n%s%s", code, want, out, stderr)
		}
	}

	code, out, stderr = e.starter("approve", "--session", "doors", first.ToolCallID)
	if code != cli.ExitOK || !strings.Contains(out, "approved tool call "+first.ToolCallID+" in session doors") {
		t.Fatalf("approve: exit %d\n%s%s", code, out, stderr)
	}
	second := e.approvalOf("doors", "two.txt")
	code, out, stderr = e.starter("approve", "--session", "doors", "--deny", "--reason", "not two", second.ToolCallID)
	if code != cli.ExitOK || !strings.Contains(out, "denied tool call "+second.ToolCallID+" in session doors") {
		t.Fatalf("approve --deny: exit %d\n%s%s", code, out, stderr)
	}
	if end := e.ended("doors"); end.Status != agent.StatusCompleted {
		t.Fatalf("prompt_end %+v", end)
	}

	evs := e.events("doors")
	if got := strings.Join(userTexts(evs), " | "); got != "make two files | and then summarize" {
		t.Errorf("user messages %q, want the prompt then the follow-up", got)
	}
	if ev, ok := toolEnd(evs, first.ToolCallID); !ok || ev.IsError {
		t.Errorf("approved call's end %+v (found %t), want a success", ev, ok)
	}
	if ev, ok := toolEnd(evs, second.ToolCallID); !ok || !ev.IsError || resultOf(ev) != workflows.ToolDeniedMessage+": not two" {
		t.Errorf("denied call's end %+v (found %t), want an error with the reason", ev, ok)
	}
	for name, want := range map[string]bool{"one.txt": true, "two.txt": false} {
		if _, err := os.Stat(filepath.Join(ws, name)); (err == nil) != want {
			t.Errorf("%s exists: %t, want %t", name, err == nil, want)
		}
	}
	code, out, _ = e.starter("state", "--session", "doors")
	if code != cli.ExitOK || !strings.Contains(out, "pendingMessageCount 0") || strings.Contains(out, "waiting for approval") {
		t.Errorf("state after the end: exit %d\n%s", code, out)
	}

	// steer while a call waits: the call is skipped, the prompt goes on
	// with the steering message.
	e.startIn("steered", ws, "make a third file", `tool:bash {"command":"echo three > three.txt"}`, `text:steered answer`)
	third := e.approvalOf("steered", "three.txt")
	code, out, stderr = e.starter("steer", "--session", "steered", "skip", "that,", "just", "answer")
	if code != cli.ExitOK || !strings.Contains(out, "sent steer to session steered") {
		t.Fatalf("steer: exit %d\n%s%s", code, out, stderr)
	}
	if end := e.ended("steered"); end.Status != agent.StatusCompleted {
		t.Fatalf("prompt_end %+v", end)
	}
	evs = e.events("steered")
	if got := strings.Join(userTexts(evs), " | "); got != "make a third file | skip that, just answer" {
		t.Errorf("user messages %q, want the prompt then the steering message", got)
	}
	if ev, ok := toolEnd(evs, third.ToolCallID); !ok || !ev.IsError || resultOf(ev) != workflows.SkippedForSteerMessage {
		t.Errorf("the waiting call's end %+v (found %t), want skipped for the steer message", ev, ok)
	}
	if _, err := os.Stat(filepath.Join(ws, "three.txt")); err == nil {
		t.Error("three.txt exists: the skipped call ran")
	}
}

// Issue 12: a steer and a follow-up sent while no worker runs (the prompt
// waits for an approval) are workflow state: after the worker restarts
// the steer skips the waiting call and is delivered, then the follow-up
// when the loop would end, in that order.
func TestIntegration_QueuedWhileWorkerDownDelivered(t *testing.T) {
	e := newEnv(t)
	e.s.Tools.RequireApproval = []string{"bash"}
	e.startWorker()
	ws := t.TempDir()
	e.startIn("down", ws, "make a file", `tool:bash {"command":"echo a > a.txt"}`, `text:steered`, `text:followed up`)
	req := e.approvalOf("down", "a.txt")

	e.stopWorker()
	for _, args := range [][]string{
		{"follow-up", "--session", "down", "then say goodbye"},
		{"steer", "--session", "down", "do not run it"},
	} {
		if code, out, stderr := e.starter(args...); code != cli.ExitOK {
			t.Fatalf("%s with the worker down: exit %d\n%s%s", args[0], code, out, stderr)
		}
	}
	e.startWorker()

	if end := e.ended("down"); end.Status != agent.StatusCompleted {
		t.Fatalf("prompt_end %+v", end)
	}
	evs := e.events("down")
	if got := strings.Join(userTexts(evs), " | "); got != "make a file | do not run it | then say goodbye" {
		t.Errorf("user messages %q, want the prompt, the steer, then the follow-up", got)
	}
	if ev, ok := toolEnd(evs, req.ToolCallID); !ok || resultOf(ev) != workflows.SkippedForSteerMessage {
		t.Errorf("the waiting call's end %+v (found %t), want skipped for the steer message", ev, ok)
	}
	if _, err := os.Stat(filepath.Join(ws, "a.txt")); err == nil {
		t.Error("a.txt exists: the skipped call ran")
	}
	var last string
	for _, ev := range evs {
		if ev.Type == agent.EventMessageEnd && ev.Message != nil && ev.Message.Role == agent.RoleAssistant {
			last = ev.Message.Text()
		}
	}
	if last != "followed up" {
		t.Errorf("last answer %q, want the answer to the follow-up", last)
	}
}
