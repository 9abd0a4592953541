package activities

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/internal/tools"
)

// SubAgentTaskName is the registered name of SubAgentTask.
const SubAgentTaskName = "SubAgentTask"

// SubAgentTaskInput names a task call: the parent's session, the
// assistant entry that holds the call, and the parent's tools (a
// sub-agent's tools only narrow them).
type SubAgentTaskInput struct {
	SessionID        string   `json:"sessionId"`
	AssistantEntryID string   `json:"assistantEntryId"`
	ToolCallID       string   `json:"toolCallId"`
	Enabled          []string `json:"enabled"`
}

// SubAgentTaskResult is the task call's arguments, checked (Task), or
// the one-line problem that makes the call's error result (Problem).
type SubAgentTaskResult struct {
	Task    tools.TaskCall `json:"task"`
	Problem string         `json:"problem,omitempty"`
}

// SubAgentTask reads a task call's arguments from the assistant entry
// (history carries ids, not the prompt a model wrote) and checks them
// (tools.ParseTask). Bad arguments are a result, not an error: the model
// reads the problem and corrects its call. A call that is not in the
// entry is a non-retryable error.
func (a *Activities) SubAgentTask(ctx context.Context, in SubAgentTaskInput) (SubAgentTaskResult, error) {
	sess, err := a.load(in.SessionID)
	if err != nil {
		return SubAgentTaskResult{}, err
	}
	call, err := findToolCall(sess, in.AssistantEntryID, in.ToolCallID)
	if err != nil {
		return SubAgentTaskResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
	}
	if call.Name != tools.Task {
		return SubAgentTaskResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("tool call %s is a call of %s, not of %s", call.ID, call.Name, tools.Task), ErrTypeBadInput, nil)
	}
	task, err := tools.ParseTask(call.Arguments, in.Enabled)
	if err != nil {
		return SubAgentTaskResult{Problem: err.Error()}, nil
	}
	return SubAgentTaskResult{Task: task}, nil
}
