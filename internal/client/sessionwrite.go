package client

import (
	"context"
	"fmt"

	"go.temporal.io/sdk/client"

	"github.com/durableagent/durableagent/workflows"
)

// StartSessionWrite starts the SessionWrite workflow, which appends
// entries after the session's leaf. It starts under the session's
// workflow id, so it fails with ErrSessionBusy while a prompt, a
// compaction or a user command runs, and no prompt can start until the
// entries are written: a write from outside a prompt never interleaves
// with one. Once started the write is durable: it lands when a worker
// runs it.
func (k *Controller) StartSessionWrite(ctx context.Context, in workflows.SessionWriteInput) (client.WorkflowRun, error) {
	return k.startSessionWorkflow(ctx, in.SessionID, fmt.Sprintf("write %d entries to session %s", len(in.Entries), in.SessionID),
		"session write of", workflows.SessionWriteWorkflowName, in, nil)
}

// SetSessionSetting changes one of the session's own settings
// (session.Settings) with the SessionWrite workflow, so it never
// interleaves with a prompt and shows in its events, and waits for it. A
// session that has no prompt yet is refused: its first prompt records its
// settings.
func (k *Controller) SetSessionSetting(ctx context.Context, sessionID string, c workflows.SessionSettingChange) error {
	run, err := k.StartSessionWrite(ctx, workflows.SessionWriteInput{SessionID: sessionID, Change: &c})
	if err != nil {
		return err
	}
	var res workflows.SessionWriteResult
	if err := run.Get(ctx, &res); err != nil {
		return fmt.Errorf("set %s of session %s: %w", c.Key, sessionID, err)
	}
	if !res.Written {
		return fmt.Errorf("set %s of session %s: session has no prompt yet: its first prompt records its settings", c.Key, sessionID)
	}
	return nil
}
