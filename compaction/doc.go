// Package compaction is the pure planning half of context compaction
// (docs/spec.md section 9): the threshold rule,
// token estimation, the cut point between the part of the context that is
// summarised and the part that is kept, and the text of the summary
// prompts.
//
// It does no I/O, reads no clock and imports neither Temporal nor any other
// project package, so its answers depend only on its arguments and it can
// run inside workflow code. Callers convert their messages to Item (one per
// run-context message, in order, oldest first) and act on the answers:
// the workflow decides when to compact, an activity sends SummaryPrompt to
// the model and records the compaction entry.
//
// Token counts here are estimates (runes / 4, rounded up) unless the caller
// supplies real counts through Item.Tokens or a UsageAnchor; the rules only
// need "about right", and an estimate that errs high compacts a little early
// rather than overflowing.
package compaction
