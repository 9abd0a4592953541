package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
)

// DeleteSessionWorkflowName is the registered name of the DeleteSession
// workflow.
const DeleteSessionWorkflowName = "DeleteSession"

// Error types of a DeleteSession workflow that deleted nothing
// (ErrTypeUnknownSession: the session does not exist) or could not finish
// (ErrTypeDeleteFailed: the store or the workspace refused; running it
// again finishes the job).
const (
	ErrTypeUnknownSession = "UnknownSession"
	ErrTypeDeleteFailed   = "DeleteSessionFailed"
)

// DeleteSessionInput is the input of the DeleteSession workflow.
type DeleteSessionInput struct {
	SessionID string `json:"sessionId"`
	// HostWaitMs is how long the deletion waits for the session's tool
	// host to take it (tools.hostWaitMs; 0: DefaultHostWait).
	HostWaitMs int64 `json:"hostWaitMs,omitempty"`
	// Force deletes a worktree session whose work is not saved
	// (activities.DeleteSessionInput.Force).
	Force bool `json:"force,omitempty"`
}

// Validate reports the problems of the input in one line.
func (in DeleteSessionInput) Validate() error {
	var p problems
	p.add(strings.TrimSpace(in.SessionID) == "", "sessionId is empty")
	p.add(in.HostWaitMs < 0, "hostWaitMs must be >= 0")
	return p.invalid("delete")
}

// DeleteSessionResult says what the DeleteSession workflow removed.
type DeleteSessionResult struct {
	SessionID string `json:"sessionId"`
	// Workspace is the deleted session's workspace (left in place).
	Workspace string `json:"workspace,omitempty"`
	// The outputs directory, worktree and branch that were removed.
	activities.DeleteSessionResult
}

// DeleteSession deletes a session (`starter session delete`) with the
// DeleteSession activity, on the session's tool host when it has one,
// under the session's workflow id, so nothing else of the session runs
// meanwhile. An unknown session fails with ErrTypeUnknownSession; once
// deleted, the state and events queries answer that it was.
func DeleteSession(ctx workflow.Context, in DeleteSessionInput) (DeleteSessionResult, error) {
	if err := in.Validate(); err != nil {
		return DeleteSessionResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
	}
	deleted := func() error { return fmt.Errorf("unknown session %s: it was deleted", in.SessionID) }
	if err := workflow.SetQueryHandler(ctx, agent.QueryState, func() (agent.State, error) { return agent.State{}, deleted() }); err != nil {
		return DeleteSessionResult{}, err
	}
	if err := workflow.SetQueryHandler(ctx, agent.QueryEvents, func(after int64) ([]agent.Event, error) { return nil, deleted() }); err != nil {
		return DeleteSessionResult{}, err
	}

	failed := func(err error) (DeleteSessionResult, error) {
		return DeleteSessionResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("delete session %s: %s", in.SessionID, rootMessage(err)), ErrTypeDeleteFailed, nil)
	}
	var loaded activities.LoadSessionResult
	if err := workflow.ExecuteActivity(storeOptions(ctx), activities.LoadSessionName,
		activities.LoadSessionInput{SessionID: in.SessionID}).Get(ctx, &loaded); err != nil {
		return failed(err)
	}
	if !loaded.Exists {
		return DeleteSessionResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("unknown session %s", in.SessionID), ErrTypeUnknownSession, nil)
	}
	res := DeleteSessionResult{SessionID: in.SessionID, Workspace: loaded.Workspace}
	if err := workflow.ExecuteActivity(deleteOptions(ctx, loaded.Host, in.HostWaitMs), activities.DeleteSessionName,
		activities.DeleteSessionInput{SessionID: in.SessionID, Workspace: loaded.Workspace, Force: in.Force}).Get(ctx, &res.DeleteSessionResult); err != nil {
		return failed(err)
	}
	return res, nil
}
