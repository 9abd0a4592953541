package live

import (
	"context"
	"time"
)

// Source reads the live output of a prompt's running calls: the door for
// a transport. Today's is the heartbeat reader (internal/control:
// Heartbeats, the pending activities' heartbeat details read with
// DescribeWorkflowExecution); another (one shared reader per process, a
// push path from the worker, a channel of the store) implements Read and
// is given to the follower (control.Controller.Live), and nothing that
// consumes the live events changes. The followers of one prompt in a
// process share one reader, so Read is called once per round for all of
// them.
type Source interface {
	// Read returns the latest snapshot of each running call of the
	// prompt run runID of workflow workflowID, in no particular order;
	// none when nothing runs. A failed read is retried by the caller.
	Read(ctx context.Context, workflowID, runID string) ([]Stamped, error)
}

// Stamped is a snapshot as a Source read it.
type Stamped struct {
	Snapshot
	// Call names the running call (an activity id) when the Source
	// knows it; with At it lets the reader pace its reads on the call's
	// publications.
	Call string
	// At is when the call published the snapshot (zero: not known).
	At time.Time
}
