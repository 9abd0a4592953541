package workflows

import (
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/tools"
)

// subAgent is a test tool whose spec is of kind child workflow.
const (
	subAgentTool     = "subagent"
	subAgentWorkflow = "TestSubAgent"
)

// newChildHarness is a harness whose Prompt dispatches subAgentTool to the
// child workflow child, and every other tool as package tools says.
func newChildHarness(t *testing.T, child func(workflow.Context, activities.RunToolInput) (activities.RunToolResult, error)) *harness {
	h := newHarnessWith(t, func(name string) tools.Spec {
		if name == subAgentTool {
			return tools.Spec{Attempts: 1, Timeout: time.Hour, Kind: tools.KindChildWorkflow, Workflow: subAgentWorkflow}
		}
		return tools.SpecOf(name)
	})
	h.env.RegisterWorkflowWithOptions(child, workflow.RegisterOptions{Name: subAgentWorkflow})
	return h
}

// toolEnds returns the tool_execution_end events.
func toolEnds(evs []agent.Event) []agent.Event {
	var out []agent.Event
	for _, e := range evs {
		if e.Type == agent.EventToolExecutionEnd {
			out = append(out, e)
		}
	}
	return out
}

// A tool whose spec says KindChildWorkflow runs as that child workflow,
// not as the RunTool activity: the child gets the call's input, writes the
// result entry, and its result is the call's result (the events and the
// next model call see it). The door for sub-agents (issue 21).
func TestPrompt_ChildWorkflowToolCall(t *testing.T) {
	var got []activities.RunToolInput
	h := newChildHarness(t, func(ctx workflow.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
		got = append(got, in)
		text := "sub-agent answer for " + in.ToolCallID
		msg := agent.Message{Role: agent.RoleToolResult, ToolCallID: in.ToolCallID, ToolName: in.ToolName,
			Content: []agent.ContentBlock{{Type: "text", Text: text}}, Timestamp: workflow.Now(ctx).UnixMilli()}
		err := workflow.ExecuteLocalActivity(localOptions(ctx), activities.RecordEntryName, activities.RecordEntryInput{
			SessionID: in.SessionID, Entry: session.Entry{Type: session.TypeMessage, ID: in.ResultEntryID,
				ParentID: in.ParentID, Timestamp: workflow.Now(ctx).UTC(), Message: &msg}}).Get(ctx, nil)
		return activities.RunToolResult{EntryID: in.ResultEntryID, Preview: text, Bytes: len(text)}, err
	})
	res, err := h.run(h.toolInput(`tool:subagent {"task":"count the files"}`, `text:done`))
	if err != nil || res.Status != agent.StatusCompleted || res.Text != "done" {
		t.Fatalf("prompt: %+v %v, want it completed", res, err)
	}
	if len(got) != 1 || got[0].ToolName != subAgentTool || got[0].SessionID != "s1" || got[0].ResultEntryID == "" {
		t.Fatalf("child inputs %+v, want one call of %s", got, subAgentTool)
	}
	if len(h.tools) != 0 {
		t.Fatalf("RunTool ran %d times, want 0: the call is a child workflow", len(h.tools))
	}
	want := "sub-agent answer for " + got[0].ToolCallID
	ends := toolEnds(h.events())
	if len(ends) != 1 || ends[0].IsError || ends[0].ToolResult == nil || ends[0].ToolResult.Content[0].Text != want ||
		ends[0].EntryID != got[0].ResultEntryID {
		t.Fatalf("tool_execution_end %+v, want the child's result %q", ends, want)
	}
	var results []string
	for _, e := range h.branch(res.LeafID) {
		if e.Message != nil && e.Message.Role == agent.RoleToolResult {
			results = append(results, e.Message.Text())
		}
	}
	if len(results) != 1 || results[0] != want {
		t.Fatalf("session tool results %q, want the child's %q", results, want)
	}
	if len(h.calls) != 2 {
		t.Fatalf("%d model calls, want 2 (the answer after the tool result)", len(h.calls))
	}
}

// A child-workflow tool call that fails gets the failed result, and one
// that an abort cancels gets the aborted result, as an activity's would
// (spec 13.4.7, one cut mapping).
func TestPrompt_ChildWorkflowToolCallCut(t *testing.T) {
	t.Run("failed", func(t *testing.T) {
		h := newChildHarness(t, func(ctx workflow.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
			return activities.RunToolResult{}, temporal.NewNonRetryableApplicationError("no sub-agent today", "SubAgentDown", nil)
		})
		res, err := h.run(h.toolInput(`tool:subagent {}`, `text:done`))
		if err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("prompt: %+v %v, want it completed after the error result", res, err)
		}
		ends := toolEnds(h.events())
		want := "The tool call failed: no sub-agent today"
		if len(ends) != 1 || !ends[0].IsError || ends[0].ToolResult.Content[0].Text != want {
			t.Fatalf("tool_execution_end %+v, want the error %q", ends, want)
		}
	})
	t.Run("aborted", func(t *testing.T) {
		started := false
		h := newChildHarness(t, func(ctx workflow.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
			started = true
			err := workflow.Await(ctx, func() bool { return false })
			return activities.RunToolResult{}, err
		})
		h.env.RegisterDelayedCallback(func() { h.env.SignalWorkflow(agent.SignalAbort, nil) }, time.Minute)
		res, err := h.run(h.toolInput(`tool:subagent {}`, `text:done`))
		var canceled *temporal.CanceledError
		if !errors.As(err, &canceled) || !started {
			t.Fatalf("prompt: %+v %v (child started %v), want it aborted while the child ran", res, err, started)
		}
		ends := toolEnds(h.events())
		if len(ends) != 1 || !ends[0].IsError || ends[0].ToolResult.Content[0].Text != ToolAbortedMessage {
			t.Fatalf("tool_execution_end %+v, want %q", ends, ToolAbortedMessage)
		}
	})
}
