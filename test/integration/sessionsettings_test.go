package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/workflows"
)

// sessionSettingsFixture is the history of a prompt run with its
// session's settings. Regenerate with
// UPDATE_REPLAY_HISTORY=1 go test -run SessionOwnsItsSettings ./test/integration
var sessionSettingsFixture = filepath.Join("..", "..", "workflows", "testdata", "prompt_session_settings_history.json")

// Issue 23: the settings that decide what the model may do belong to the
// session. Prompt 1 asks for approval of bash; prompt 2, sent by a client
// whose settings ask for none, still waits for approval and says the
// session's settings replaced the sender's. `session set` (SessionWrite)
// changes them explicitly, in the events, and prompt 3 runs bash at once.
func TestIntegration_SessionOwnsItsSettings(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	ctx := context.Background()
	ws := t.TempDir()
	const sid = "owned"

	first := client.PromptInput(e.s, sid, "one")
	first.Workspace = ws
	first.Approval.RequireApproval = []string{"bash"}
	first.Model.Faults = []string{`tool:bash {"command":"echo 1 > one.txt"}`, `text:one done`}
	run, err := e.k.StartPrompt(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	req := e.waitEvent(sid, 30*time.Second, isType(agent.EventToolApprovalRequest))
	if err := e.k.ApproveTool(ctx, sid, agent.ApproveToolPayload{ToolCallID: req.ToolCallID, Approved: true}); err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err != nil || res.Text != "one done" {
		t.Fatalf("prompt 1: %+v %v", res, err)
	}

	// Another terminal: its settings ask for no approval.
	other := client.PromptInput(e.s, sid, "two")
	other.Workspace = ws
	if len(other.Approval.RequireApproval) != 0 {
		t.Fatalf("the other client asks for approval itself: %+v", other.Approval)
	}
	other.Model.Faults = []string{`tool:bash {"command":"echo 2 > two.txt"}`, `text:two done`}
	run, err = e.k.StartPrompt(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	req = e.waitEvent(sid, 30*time.Second, func(ev agent.Event) bool {
		return ev.Type == agent.EventToolApprovalRequest && ev.ToolName == "bash"
	})
	if _, err := os.Stat(filepath.Join(ws, "two.txt")); err == nil {
		t.Fatal("prompt 2's bash call ran without approval")
	}
	note := e.waitEvent(sid, 5*time.Second, isType(agent.EventSessionSettings))
	if !strings.Contains(note.Reason, "tools.requireApproval") {
		t.Fatalf("session_settings event %q does not name tools.requireApproval", note.Reason)
	}
	if err := e.k.ApproveTool(ctx, sid, agent.ApproveToolPayload{ToolCallID: req.ToolCallID, Approved: true}); err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err != nil || res.Text != "two done" {
		t.Fatalf("prompt 2: %+v %v", res, err)
	}
	exportAndReplay(t, e, run.GetID(), run.GetRunID(), sessionSettingsFixture)

	// The explicit change: the session stops asking.
	change := workflows.SessionSettingChange{Key: "tools.requireApproval", Value: "", From: workflows.SessionSettingsOf(other)}
	if err := e.k.SetSessionSetting(ctx, sid, change); err != nil {
		t.Fatalf("session set: %v", err)
	}
	set := e.waitEvent(sid, 5*time.Second, isType(agent.EventSessionSettings))
	if !strings.Contains(set.Reason, `tools.requireApproval set to ""`) {
		t.Fatalf("the change's event says %q", set.Reason)
	}
	third := client.PromptInput(e.s, sid, "three")
	third.Workspace = ws
	third.Model.Faults = []string{`tool:bash {"command":"echo 3 > three.txt"}`, `text:three done`}
	run, err = e.k.StartPrompt(ctx, third)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err != nil || res.Text != "three done" {
		t.Fatalf("prompt 3: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "three.txt")); err != nil {
		t.Fatalf("prompt 3's bash call did not run: %v", err)
	}

	// The session's budget cap through the starter: a prompt after it
	// stops before any model call, at the session's cap.
	code, out, stderr := e.starter("session", "set", "budget.session.maxTokens", "1", "--session", sid)
	if code != 0 || !strings.Contains(out, `budget.session.maxTokens set to "1"`) {
		t.Fatalf("starter session set budget.session.maxTokens: exit %d\n%s%s", code, out, stderr)
	}
	fourth := client.PromptInput(e.s, sid, "four")
	fourth.Workspace = ws
	fourth.Model.Faults = []string{`text:never`}
	run, err = e.k.StartPrompt(ctx, fourth)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err == nil || !strings.HasPrefix(res.Error, "budget.session.maxTokens 1 reached") {
		t.Fatalf("prompt 4 after the cap: %+v %v, want it stopped by budget.session.maxTokens 1", res, err)
	}

	// A session with no prompt yet has no settings to change.
	err = e.k.SetSessionSetting(ctx, "never-prompted", change)
	if err == nil || !strings.Contains(err.Error(), "has no prompt yet") {
		t.Fatalf("set on a session without prompt: %v", err)
	}
}
