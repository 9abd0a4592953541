// Package retry is the pure retry policy of docs/spec.md: classification of a
// failed assistant message, retry-hint parsing, the exponential delay and
// the retry-chain state machine.
//
// It does no I/O, reads no clock (callers pass "now" where a hint needs
// it) and imports neither Temporal nor any other project package. The
// workflow turns its decisions into durable timers, signals and events.
package retry
