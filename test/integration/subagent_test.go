package integration

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/workflows"
)

// The history of a prompt whose task call ran a sub-agent (the call's
// step in the prompt); workflows/replay_test.go replays it.
var subAgentFixture = filepath.Join("..", "..", "workflows", "testdata", "prompt_subagent_history.json")

// Issue 25 on the embedded server: a task call runs its sub-agent as a
// session of its own (header parentSession) whose prompt is a child
// workflow of the calling prompt (SPEC 17.1: what the Temporal UI
// shows); `starter events --session CHILD` shows the sub-agent's own
// events; the parent's tool result and events carry the sub-agent's
// answer, and the parent's history replays on the current code.
func TestIntegration_SubAgentRunsAChildSession(t *testing.T) {
	e := newEnv(t)
	e.s.Tools.Enabled = append(e.s.Tools.Enabled, "task")
	e.s.Scripted.Reply = "the sub-agent counted 42 files"
	e.startWorker()
	const parent = "subagent-parent"
	in := client.PromptInput(e.s, parent, "delegate the count")
	in.Workspace = t.TempDir()
	in.Model.Faults = []string{`tool:task {"description":"count files","prompt":"count the files"}`, `text:the parent is done`}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.result(run)
	if err != nil || res.Status != agent.StatusCompleted || res.Text != "the parent is done" {
		t.Fatalf("parent: %+v %v, want it completed", res, err)
	}
	var child string
	var toolResult string
	var ended bool
	for _, ev := range e.events(parent) {
		switch ev.Type {
		case agent.EventSubAgentStart:
			child = ev.SessionID
		case agent.EventSubAgentEnd:
			ended = ev.SessionID == child && !ev.IsError && ev.Usage != nil && ev.Usage.Tokens() > 0
		case agent.EventToolExecutionEnd:
			toolResult = ev.ToolResult.Content[0].Text
		}
	}
	if child == "" || !ended {
		t.Fatalf("subagent_start/_end of the parent: child %q, ended %v", child, ended)
	}
	if !strings.HasPrefix(toolResult, "the sub-agent counted 42 files") {
		t.Fatalf("the parent's tool result %q, want the sub-agent's answer", toolResult)
	}
	if res.Usage == nil || res.ToolCalls != 1 || res.Turns != 2 {
		t.Fatalf("parent's account %+v (usage %+v), want 2 turns, 1 tool call, usage", res, res.Usage)
	}

	code, out, stderr := e.starter("events", "--session", child)
	if code != cli.ExitOK || !strings.Contains(out, "the sub-agent counted 42 files") || strings.Contains(out, "the parent is done") {
		t.Fatalf("starter events --session %s: exit %d\nstdout %s\nstderr %s", child, code, out, stderr)
	}
	code, out, stderr = e.starter("events", "--session", parent)
	if code != cli.ExitOK || !strings.Contains(out, "Sub-agent "+child+" started") {
		t.Fatalf("starter events --session %s: exit %d\nstdout %s\nstderr %s", parent, code, out, stderr)
	}

	store, err := session.Open(filepath.Join(e.dataDir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	sess, err := store.Load(child)
	if err != nil || sess.Header.ParentSession != parent || sess.Header.Cwd != in.Workspace {
		t.Fatalf("the sub-agent's session header %+v %v, want parentSession %s in the parent's workspace", sess.Header, err, parent)
	}

	desc, err := e.c.DescribeWorkflowExecution(context.Background(), workflows.WorkflowID(child), "")
	if err != nil {
		t.Fatal(err)
	}
	if p := desc.GetWorkflowExecutionInfo().GetParentExecution(); p.GetWorkflowId() != run.GetID() || p.GetRunId() != run.GetRunID() {
		t.Fatalf("the sub-agent's prompt has parent %v, want the parent's prompt %s %s", p, run.GetID(), run.GetRunID())
	}
	exportAndReplay(t, e, run.GetID(), run.GetRunID(), subAgentFixture)
}
