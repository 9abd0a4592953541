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
