package retry

// Outcome is what the policy needs to know about the last assistant
// message of an agent run. The workflow fills it from the message.
type Outcome struct {
	// StopReason is "stop", "length", "toolUse", "error" or "aborted".
	StopReason   string
	ErrorMessage string
	// ErrorStatus is the provider's HTTP status when known (0: unknown).
	ErrorStatus int
	// ErrorType is the provider's structured error type when known,
	// e.g. "overloaded_error", "rate_limit_error", "insufficient_quota".
	ErrorType string
	// ShouldRetry mirrors x-should-retry when the provider sent it.
	ShouldRetry *bool
	// RetryAfterMs is the wait the provider asked for in its response
	// headers (ParseRetryHintHeaders), carried as data from the provider
	// (agent.Message.RetryAfterMs); nil when it sent none. A valid one
	// wins over any hint in ErrorMessage.
	RetryAfterMs *int64
	// InputTokens and CacheReadTokens are the reported usage; with
	// ContextWindow (0: unknown) they detect silent overflow.
	InputTokens     int
	CacheReadTokens int
	ContextWindow   int
}

// Class is the policy's verdict on an outcome.
type Class string

// Classes. Only ClassRetryable and ClassUsageLimit start a retry.
const (
	// ClassNone: not an error (success, or an abort by the user).
	ClassNone Class = "none"
	// ClassRetryable: overload, rate limit, server or network failure.
	ClassRetryable Class = "retryable"
	// ClassUsageLimit: retryable, through the usage-limit branch.
	ClassUsageLimit Class = "usage_limit"
	// ClassContextOverflow: never retried; goes to compaction.
	ClassContextOverflow Class = "context_overflow"
	// ClassFatal: an error no wait can fix.
	ClassFatal Class = "fatal"
)

// Classification is Classify's answer.
type Classification struct {
	Class Class
	// Pattern names what matched (a regexp, "status 503",
	// "type overloaded_error", "silent overflow"), for people asking
	// "why did this retry?".
	Pattern string
	// RetryAfterMs is the retry hint: Outcome.RetryAfterMs when valid,
	// else the one found in the error text (ParseRetryHint); HasHint says
	// whether there was one.
	RetryAfterMs int64
	HasHint      bool
}

// Retryable reports whether the class starts (or continues) a retry chain:
// the original's isRetryableError.
func (c Class) Retryable() bool { return c == ClassRetryable || c == ClassUsageLimit }
