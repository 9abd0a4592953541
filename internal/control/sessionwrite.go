package control

import (
	"context"
	"fmt"

	"github.com/durableagent/durableagent/workflows"
)

// WriteSession appends entries after the session's leaf with the
// SessionWrite workflow and waits for it. It starts under the session's
// workflow id, so it fails with ErrSessionBusy while a prompt, a
// compaction or a user command runs, and no prompt can start until the
// entries are written: a write from outside a prompt never interleaves
// with one. A session without a file yet is written nothing (false).
func (k *Controller) WriteSession(ctx context.Context, in workflows.SessionWriteInput) (bool, error) {
	if err := in.Validate(); err != nil {
		return false, err
	}
	opts := k.sessionStartOptions(in.SessionID, fmt.Sprintf("write %d entries to session %s", len(in.Entries), in.SessionID))
	run, err := k.startSessionWorkflow(ctx, opts, in.SessionID, "session write of", workflows.SessionWriteWorkflowName, in)
	if err != nil {
		return false, err
	}
	var res workflows.SessionWriteResult
	if err := run.Get(ctx, &res); err != nil {
		return false, fmt.Errorf("write session %s: %w", in.SessionID, err)
	}
	return res.Written, nil
}
