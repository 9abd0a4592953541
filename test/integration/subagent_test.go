package integration

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/workflows"
)

// The history of a prompt whose task call ran a sub-agent (the call's
// step in the prompt, GetVersion "subagent-inline");
// workflows/replay_test.go replays it. Regenerate with
// UPDATE_REPLAY_HISTORY=1 go test -run TestIntegration_SubAgentRunsAChildSession
// ./test/integration (the fixtures of the SubAgent workflow's shape,
// prompt_subagent_history.json and subagent_history.json, were recorded
// before it and are kept as they are).
var subAgentInlineFixture = filepath.Join("..", "..", "workflows", "testdata", "prompt_subagent_inline_history.json")

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
	exportAndReplay(t, e, run.GetID(), run.GetRunID(), subAgentInlineFixture)
}

// Issue 25 (SPEC 17.4) on the embedded server: a second run of a task
// call's step (as a re-run task would make; here the SubAgent workflow,
// which runs the step a prompt runs, with the call and the sub-agent's
// input as the parent started it) whose sub-agent already ran: the
// sub-agent's start is refused by the server, so the sub-agent's prompt
// has one execution, its session one user message, and the parent's
// session keeps the one result of the call, which the second run
// returns.
func TestIntegration_SubAgentSecondStartRefused(t *testing.T) {
	e := newEnv(t)
	e.s.Tools.Enabled = append(e.s.Tools.Enabled, "task")
	e.s.Scripted.Reply = "counted once"
	e.startWorker()
	const parent = "subagent-second-start"
	in := client.PromptInput(e.s, parent, "delegate the count")
	in.Workspace = t.TempDir()
	in.Model.Faults = []string{`tool:task {"description":"count once","prompt":"count the files"}`, `text:the parent is done`}
	ctx := context.Background()
	run, err := e.k.StartPrompt(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("parent: %+v %v, want it completed", res, err)
	}
	var child, callID string
	for _, ev := range e.events(parent) {
		if ev.Type == agent.EventSubAgentStart {
			child, callID = ev.SessionID, ev.ToolCallID
		}
	}
	if child == "" {
		t.Fatal("the parent started no sub-agent")
	}
	first, err := e.c.DescribeWorkflowExecution(ctx, workflows.WorkflowID(child), "")
	if err != nil {
		t.Fatal(err)
	}

	// The sub-agent's input as the parent started it, and the call.
	subIn := workflows.SubAgentInput{Call: activities.RunToolInput{SessionID: parent, ToolCallID: callID,
		ToolName: "task", Workspace: in.Workspace, Tools: in.Tools}}
	iter := e.c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetStartChildWorkflowExecutionInitiatedEventAttributes(); a != nil && a.GetWorkflowId() == workflows.WorkflowID(child) {
			if err := converter.GetDefaultDataConverter().FromPayloads(a.GetInput(), &subIn.Prompt); err != nil {
				t.Fatal(err)
			}
		}
	}
	if subIn.Prompt.SessionID != child {
		t.Fatalf("no start of the sub-agent's prompt %s in the parent's history", child)
	}
	store, err := session.Open(filepath.Join(e.dataDir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	sess, err := store.Load(parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range sess.Entries {
		switch {
		case en.Message == nil:
		case en.Message.Role == agent.RoleAssistant && len(en.Message.ToolCalls()) == 1 && en.Message.ToolCalls()[0].ID == callID:
			subIn.Call.AssistantEntryID = en.ID
		case en.Message.Role == agent.RoleToolResult && en.Message.ToolCallID == callID:
			subIn.Call.ResultEntryID, subIn.Call.ParentID = en.ID, en.ParentID
		}
	}
	if subIn.Call.AssistantEntryID == "" || subIn.Call.ResultEntryID == "" {
		t.Fatalf("the parent's session has no task call %s and result: %+v", callID, subIn.Call)
	}

	subID := workflows.WorkflowID(parent) + "-again-" + callID
	again, err := e.c.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: subID, TaskQueue: e.s.Temporal.TaskQueue},
		workflows.SubAgentWorkflowName, subIn)
	if err != nil {
		t.Fatal(err)
	}
	var out activities.RunToolResult
	if err := again.Get(ctx, &out); err != nil {
		t.Fatalf("second run of the call's step: %v", err)
	}
	if out.IsError || !strings.HasPrefix(out.Preview, "counted once") {
		t.Fatalf("second run's result %+v, want the call's first result, which stands", out)
	}
	refused := false
	iter = e.c.GetWorkflowHistory(ctx, subID, again.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if a := ev.GetStartChildWorkflowExecutionFailedEventAttributes(); a != nil && a.GetWorkflowId() == workflows.WorkflowID(child) &&
			a.GetCause() == enumspb.START_CHILD_WORKFLOW_EXECUTION_FAILED_CAUSE_WORKFLOW_ALREADY_EXISTS {
			refused = true
		}
	}
	if !refused {
		t.Fatalf("the second run %s has no refused start of %s", subID, workflows.WorkflowID(child))
	}

	now, err := e.c.DescribeWorkflowExecution(ctx, workflows.WorkflowID(child), "")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := first.GetWorkflowExecutionInfo().GetExecution().GetRunId(), now.GetWorkflowExecutionInfo().GetExecution().GetRunId(); a != b {
		t.Fatalf("the sub-agent's prompt %s has a new run %s (first %s), want none", child, b, a)
	}
	q := fmt.Sprintf("WorkflowId = '%s'", workflows.WorkflowID(child))
	resp, err := e.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{Query: q})
	if err != nil {
		t.Fatalf("list %s: %v", q, err)
	}
	if n := len(resp.GetExecutions()); n != 1 {
		t.Fatalf("%d executions with %s, want 1", n, q)
	}

	count := func(id string, role agent.Role) int {
		sess, err := store.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, en := range sess.Entries {
			if en.Message != nil && en.Message.Role == role {
				n++
			}
		}
		return n
	}
	if n := count(child, agent.RoleUser); n != 1 {
		t.Fatalf("the sub-agent's session has %d user messages, want 1 (it ran once)", n)
	}
	if n := count(parent, agent.RoleToolResult); n != 1 {
		t.Fatalf("the parent's session has %d tool results, want 1", n)
	}
}
