package live

import "time"

// Stamped is a snapshot as a follower read it: from a running call's
// heartbeat details or its push stream.
type Stamped struct {
	Snapshot
	// Call names the running call (an activity id) when known.
	Call string
	// At is when the call published the snapshot (zero: not known).
	At time.Time
}
