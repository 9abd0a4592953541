package client

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/workflows"
)

// ErrUnknownSession: the session to delete does not exist.
var ErrUnknownSession = errors.New("unknown session")

// DeleteSession deletes a session (the DeleteSession workflow) and waits
// for it: the full outputs of its truncated bash calls and the session in
// the store. It starts under the session's workflow id, so it fails with
// ErrSessionBusy while a prompt, a compaction or a user command runs, and
// deletes nothing then; a session that does not exist gives
// ErrUnknownSession.
func (k *Controller) DeleteSession(ctx context.Context, in workflows.DeleteSessionInput) (workflows.DeleteSessionResult, error) {
	run, err := k.startSessionWorkflow(ctx, in.SessionID, "delete session "+in.SessionID, "deletion of", workflows.DeleteSessionWorkflowName, in, nil)
	if err != nil {
		return workflows.DeleteSessionResult{}, err
	}
	var res workflows.DeleteSessionResult
	err = run.Get(ctx, &res)
	var appErr *temporal.ApplicationError
	switch {
	case err == nil:
		return res, nil
	case errors.As(err, &appErr) && appErr.Type() == workflows.ErrTypeUnknownSession:
		return workflows.DeleteSessionResult{}, fmt.Errorf("%w %s: nothing deleted", ErrUnknownSession, in.SessionID)
	case errors.As(err, &appErr):
		return workflows.DeleteSessionResult{}, fmt.Errorf("%s (workflow %s)", appErr.Message(), run.GetID())
	}
	return workflows.DeleteSessionResult{}, fmt.Errorf("delete session %s: %w", in.SessionID, err)
}
