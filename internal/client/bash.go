package client

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/client"

	"github.com/durableagent/durableagent/workflows"
)

// StartBash starts the Bash workflow of in.SessionID (a command the user
// runs in the session's workspace, RPC bash) under the session's workflow
// id, so it cannot race a prompt: a running one makes it fail with
// ErrSessionBusy. Abort stops the command.
func (k *Controller) StartBash(ctx context.Context, in workflows.BashInput) (client.WorkflowRun, error) {
	return k.startSessionWorkflow(ctx, in.SessionID, Summary("bash: ", in.Command), "bash in", workflows.BashWorkflowName, in, nil)
}

// BashResult waits for a Bash workflow and returns its result. A command
// that could not be run returns its BashResult (Status failed) with an
// error. When ctx ends first the command keeps running in Temporal.
func BashResult(ctx context.Context, run client.WorkflowRun) (workflows.BashResult, error) {
	res, err := runResult[workflows.BashResult](ctx, run)
	switch {
	case err == nil:
		return res, nil
	case res.Status != "":
		return res, errors.New(res.Error)
	}
	return workflows.BashResult{}, fmt.Errorf("bash in session %s: %w", workflowSession(run), err)
}
