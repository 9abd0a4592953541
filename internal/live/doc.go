// Package live is a prompt's live output, in one place for the worker
// and for every consumer: the text of a running model call and the output
// of a running tool, which never enter workflow history.
//
//   - Worker side, an Accumulator collects what a running CallModel or
//     RunTool activity has produced and makes bounded Snapshots of it
//     (MaxSnapshotBytes), which the activity publishes as its heartbeat
//     details and, when the worker runs a Hub (push.go), to the followers
//     that Subscribe to it as they change: over HTTPS, the follower
//     pinning the certificate the details name (push_tls.go), and sealed
//     with the worker's payload codec when it has one (push_codec.go).
//   - Follower side, the follower reads the latest Snapshot of each
//     running call of a prompt from its push stream (Subscribe), or, the
//     fallback, from the pending activities' heartbeat details
//     (DescribeWorkflowExecution), and a Cursor turns successive snapshots
//     into message_update and tool_execution_update events (IsLive) given
//     the workflow events delivered so far: each byte once, in order, the
//     rest of a message completed before its message_end.
//   - In a client process the followers of one prompt share one reader
//     (internal/client's share.go): the snapshots are read once
//     whatever the number of followers, and each follower's own Cursor
//     makes its events.
//   - Consumers build the partial assistant message those deltas make
//     with a Partial (RPC mode's message_update, the terminal UI).
//
// Snapshots and live events are for display only: the entry the activity
// writes, and the message_end / tool_execution_end event, stay
// authoritative.
package live
