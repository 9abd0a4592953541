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
	// nothing older than the kept tail to summarise: the recent messages
	// alone are too large for the window.
	NothingToCompactMessage = "context overflow but nothing to compact: the most recent messages " +
		"alone exceed the context window; lower compaction.keepRecentTokens or start a new session"
)
