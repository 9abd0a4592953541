package workflows

import "go.temporal.io/sdk/temporal"

// Origins of a prompt (PromptInput.Origin). When model calls wait for the
// same limit (a provider's model queue at model.maxConcurrentCalls or
// model.callsPerSecond), Temporal dispatches them in priority order: a
// person waiting at a terminal (TUI, RPC, starter prompt) goes before
// scheduled and delegated work (SPEC 18.3).
const (
	OriginInteractive = "interactive"
	OriginScheduled   = "scheduled"
	OriginDelegated   = "delegated"
)

// Priority keys of the origins: 1 is the highest of the server's levels
// (matching.priorityLevels, 5 by default); 0 leaves the server's default,
// the middle level (3), to a prompt of unknown origin.
const (
	PriorityInteractive = 1
	PriorityDelegated   = 4
	PriorityScheduled   = 5
)

// maxFairnessKey is the server's bound on a fairness key, in bytes.
const maxFairnessKey = 64

// priorityOf is the task-queue priority of a prompt's model calls: the
// origin's priority key, and the session as the fairness key, so that
// where the server balances fairness (matching.enableFairness) one busy
// session cannot starve the others of its priority level. Both are
// derived from the input, so a replay schedules alike; a prompt of no
// origin gets the zero Priority.
func priorityOf(in PromptInput) temporal.Priority {
	key := map[string]int{OriginInteractive: PriorityInteractive, OriginDelegated: PriorityDelegated,
		OriginScheduled: PriorityScheduled}[in.Origin]
	if key == 0 {
		return temporal.Priority{}
	}
	return temporal.Priority{PriorityKey: key, FairnessKey: in.SessionID[:min(len(in.SessionID), maxFairnessKey)]}
}
