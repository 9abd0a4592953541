package compaction

// Messages the workflow shows when compaction cannot recover a prompt. They
// are constants so the workflow, its tests and clients agree on the text.
const (
	// OverflowRecoveryFailed fails a prompt whose retry right after an
	// overflow compaction overflowed again: one compact-and-retry attempt
	// only, never a loop (SPEC 9).
	OverflowRecoveryFailed = "Context overflow recovery failed after one compact-and-retry attempt"

	// OverflowCompactionDisabled fails a prompt that overflowed while
	// compaction.enabled is false, telling the user the two ways out.
	OverflowCompactionDisabled = "context overflow and compaction.enabled is false: " +
		"enable compaction (set compaction.enabled=true) or start a new session to continue"

	// NothingToCompactMessage fails an overflow recovery whose cut found
	// nothing older than the kept tail to summarise while the run context
	// holds messages before the newest: a smaller kept tail would leave
	// some of them to summarise.
	NothingToCompactMessage = "context overflow but nothing to compact: the most recent messages " +
		"alone exceed the context window; lower compaction.keepRecentTokens or start a new session"

	// PromptExceedsWindowMessage fails an overflow recovery whose run
	// context is the prompt alone (a new session's first prompt): nothing
	// precedes it to summarise, whatever keepRecentTokens says, so only a
	// shorter prompt or a larger window helps.
	PromptExceedsWindowMessage = "context overflow but nothing to compact: the prompt alone exceeds " +
		"the context window; shorten the prompt or use a model with a larger context window"
)

// NothingToCompactMessageFor is the message that fails an overflow
// recovery with nothing to compact, for a run context of contextItems
// items (activities.SummarizeResult.MessageCount): with one item or none
// it is the prompt alone, and lowering compaction.keepRecentTokens cannot
// help (PlanCut finds no cut point after the first item whatever it
// keeps); with more there are older messages a smaller kept tail leaves
// to summarise.
func NothingToCompactMessageFor(contextItems int) string {
	if contextItems <= 1 {
		return PromptExceedsWindowMessage
	}
	return NothingToCompactMessage
}
