package workflows

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/tools"
)

// SPEC 17.4 (exactly once): a second run of a task call's step, with the
// call and the sub-agent's session as the parent ran it (as a re-run of
// the step would make), does not run the sub-agent again: the start of
// its prompt is refused (reject-duplicate on the workflow id of its
// session), the call's first result stands in the parent's session and
// is what the second run returns, and the sub-agent's session has one
// user message.
func TestSubAgent_SecondStartOfACallIsRefused(t *testing.T) {
	h := newSubHarness(t)
	h.scripts["count the files"] = []string{"text:counted once"}
	parent := h.taskInput("count the files")
	// findCall reads the task call and its result from the parent's
	// session, as the parent's step had them.
	findCall := func(context.Context) (activities.RunToolInput, error) {
		sess, err := h.store.Load("s1")
		if err != nil {
			return activities.RunToolInput{}, err
		}
		call := activities.RunToolInput{SessionID: "s1", ToolName: tools.Task, Workspace: parent.Workspace, Tools: parent.Tools}
		for _, e := range sess.Entries {
			switch m := e.Message; {
			case m == nil:
			case m.Role == agent.RoleAssistant && len(m.ToolCalls()) == 1:
				call.AssistantEntryID, call.ToolCallID = e.ID, m.ToolCalls()[0].ID
			case m.Role == agent.RoleToolResult && m.ToolCallID == call.ToolCallID:
				call.ResultEntryID, call.ParentID = e.ID, e.ParentID
			}
		}
		if call.ResultEntryID == "" {
			return call, errors.New("the parent's session has no task call with its result")
		}
		return call, nil
	}
	var child string
	again := func(ctx workflow.Context) (activities.RunToolResult, error) {
		pctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: WorkflowID("s1")})
		if err := workflow.ExecuteChildWorkflow(pctx, PromptWorkflowName, parent).Get(ctx, nil); err != nil {
			return activities.RunToolResult{}, err
		}
		var call activities.RunToolInput
		lctx := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
		if err := workflow.ExecuteLocalActivity(lctx, findCall).Get(ctx, &call); err != nil {
			return activities.RunToolResult{}, err
		}
		child = SubAgentSessionID("s1", call.ResultEntryID, call.ToolCallID)
		p := parent
		p.SessionID, p.Message, p.Model.Faults = child, "", nil
		p.Parent = &SubAgentParent{SessionID: "s1", ToolCallID: call.ToolCallID, Depth: 1}
		return runSubAgent(ctx, call, p, 0)
	}
	h.env.RegisterWorkflowWithOptions(again, workflow.RegisterOptions{Name: "TaskStepAgain"})
	h.env.ExecuteWorkflow("TaskStepAgain")
	var out activities.RunToolResult
	if err := h.env.GetWorkflowResult(&out); err != nil {
		t.Fatalf("second run of the task call's step: %v", err)
	}
	if out.IsError || !strings.HasPrefix(out.Preview, "counted once") {
		t.Fatalf("second run's result %+v, want the call's first result, which stands", out)
	}
	count := func(id string, role agent.Role) int {
		sess, err := h.store.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range sess.Entries {
			if e.Message != nil && e.Message.Role == role {
				n++
			}
		}
		return n
	}
	if n := count(child, agent.RoleUser); n != 1 {
		t.Fatalf("the sub-agent's session %s has %d user messages, want 1 (it ran once)", child, n)
	}
	if n := count("s1", agent.RoleToolResult); n != 1 {
		t.Fatalf("the parent's session has %d tool results, want 1", n)
	}
}
