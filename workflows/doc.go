// Package workflows holds the Prompt workflow: one durable Temporal
// workflow per prompt, with the retry policy of docs/spec.md.
//
// It is the only package that imports go.temporal.io/sdk/workflow. It
// turns the pure decisions of package retry (and package compaction) into
// activities, durable timers, signals, queries and events. Everything here
// is deterministic: time comes from workflow.Now, waiting from
// workflow.NewTimer, concurrency from workflow.Go and selectors; no map is
// iterated for output order.
//
// Temporal mapping:
//   - workflow id WorkflowID(sessionID): a session runs one prompt at a time;
//   - signals agent.SignalAbortRetry, agent.SignalAbort, agent.SignalSetAutoRetry;
//   - queries agent.QueryState and agent.QueryEvents;
//   - the retry backoff is a cancellable durable timer; the model call is an
//     activity with RetryPolicy{MaximumAttempts: 1}.
package workflows
