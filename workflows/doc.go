// Package workflows holds the session's durable workflows (Prompt, Compact,
// Bash, SessionWrite, SessionRead, DeleteSession, ScheduledPrompt,
// ProbeHosts) and is the only package that imports go.temporal.io/sdk/workflow.
// It turns the pure decisions of packages retry and compaction into
// activities, durable timers, signals, updates, queries and events; all of
// it is deterministic (docs/spec.md; upgrades: section 19).
package workflows
