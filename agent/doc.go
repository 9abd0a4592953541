// Package agent holds the types that cross every boundary of the product:
// the conversation messages the project owns (never a provider SDK's
// structs), the events a prompt emits, the session state a client reads,
// and the names of every signal, query and event.
//
// It imports no Temporal package and no other project package, so the
// workflow, the activities, the RPC layer and external Go programs can all
// share it. Field names and JSON tags are part of the wire contract (Temporal
// history, RPC stdout, session files): add fields, never rename or retype.
package agent
