// Package live is a prompt's live output, in one place for the worker
// and for every consumer: the text of a running model call and the output
// of a running tool, which never enter workflow history. docs/live.md
// says how it travels and what it costs.
//
//   - Worker side, an Accumulator collects what a running CallModel or
//     RunTool activity has produced and makes bounded Snapshots of it
//     (MaxSnapshotBytes), published as the activity's heartbeat details
//     and, when the worker runs a Hub, pushed to the followers that
//     Subscribe (push.go; push_tls.go pins the hub's certificate,
//     push_codec.go seals the lines with the worker's payload codec).
//   - Follower side, a Cursor turns successive snapshots of the running
//     calls (pushed, or read from the pending activities' heartbeat
//     details) into message_update and tool_execution_update events
//     (IsLive): each byte once, in order, the rest of a message completed
//     before its message_end. Consumers build the partial assistant
//     message those deltas make with a Partial.
//
// Snapshots and live events are for display only: the entry the activity
// writes, and the message_end / tool_execution_end event, stay
// authoritative.
package live
