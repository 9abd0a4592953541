package retry

import (
	"cmp"
	"fmt"
)

// DefaultUsageLimitBlockMs is how long a credential stays blocked after a
// usage-limit error that carried no retry hint.
const DefaultUsageLimitBlockMs = 60_000

// AbortedMessage is the finalError of a chain ended by an aborted model
// call (SPEC 3 [fix]: the chain never dangles).
const AbortedMessage = "Request was aborted"

// CancelledMessage is the finalError of a chain cancelled during its wait.
const CancelledMessage = "Retry cancelled"

// Chain is the retry-chain state of one session: the original's
// retryAttempt (0: idle) and its "active chain" promise. The zero value is
// an idle chain. It is plain data so the workflow can keep it in state.
type Chain struct {
	Attempt int  `json:"attempt"`
	Active  bool `json:"active"` // SPEC 8 isRetrying
}

// StartEvent is the content of auto_retry_start.
type StartEvent struct {
	Attempt      int
	MaxAttempts  int
	DelayMs      int64
	ErrorMessage string
}

// EndEvent is the content of auto_retry_end.
type EndEvent struct {
	Success    bool
	Attempt    int
	FinalError string
}

// Decision is what the workflow must do after an agent run ended.
type Decision struct {
	// Classification of the last assistant message.
	Classification Classification
	// Retry: emit Start, wait Start.DelayMs on a cancellable durable timer,
	// then continue the agent from the existing context without the error.
	Retry bool
	Start StartEvent
	// UsageLimit: before emitting Start, tell the auth store that the
	// current credential hit its limit for BlockMs; if it switched to
	// another credential or model, call Decision.Switched.
	UsageLimit bool
	BlockMs    int64
	// End, when set, ends the chain: emit auto_retry_end with it.
	End *EndEvent
}

// Switched records that the usage-limit branch switched credential or
// model: the retry then happens at once (SPEC 3 step 7).
func (d *Decision) Switched() { d.Start.DelayMs = 0 }

// end closes an active chain; it returns nil for an idle one.
func (c *Chain) end(success bool, attempt int, finalError string) *EndEvent {
	active := c.Active
	*c = Chain{}
	if !active {
		return nil
	}
	return &EndEvent{Success: success, Attempt: attempt, FinalError: finalError}
}

// Decide applies the policy to the last assistant message of an agent run
// (the original's agent_end handler plus handleRetryableError), given its
// classification (ClassifyAt): the workflow classifies once and records
// the verdict in its history (a side effect), so a replay takes the
// decision the run took even when a later release classifies the same
// text differently.
func (c *Chain) Decide(o Outcome, cls Classification, s Settings) Decision {
	d := Decision{Classification: cls}
	finalError := cmp.Or(o.ErrorMessage, cls.Pattern)
	switch {
	case o.StopReason == "aborted":
		// [fix] an abort mid-chain ends the chain with an event.
		d.End = c.end(false, c.Attempt, cmp.Or(o.ErrorMessage, AbortedMessage))
		return d
	case o.StopReason != "error":
		// The first successful message after retries began ends the chain
		// successfully, even when it reports a silent overflow (which the
		// classification still sends to compaction).
		d.End = c.end(true, c.Attempt, "")
		return d
	case !cls.Class.Retryable(), !s.Enabled:
		// Fatal or overflow: [fix] a chain in progress ends here. Overflow
		// then goes to compaction; it is never retried. retry.enabled=false:
		// no retry starts; a chain switched off mid-way ends rather than
		// dangling.
		d.End = c.end(false, c.Attempt, finalError)
		return d
	}

	c.Attempt++ // incremented before the max check (SPEC 4)
	c.Active = true
	if c.Attempt > s.MaxRetries {
		// The end event reports the last attempted retry.
		d.End = c.end(false, c.Attempt-1, finalError)
		return d
	}

	delay := Delay(s.BaseDelayMs, c.Attempt)
	// On the usage-limit path a hint only says how long the credential
	// stays blocked (SPEC 4), so the cap does not end that chain.
	if cls.Class == ClassRetryable && cls.HasHint && s.MaxDelayMs > 0 && cls.RetryAfterMs > s.MaxDelayMs {
		msg := fmt.Sprintf("provider asked to wait %dms, above retry.maxDelayMs=%d: %s",
			cls.RetryAfterMs, s.MaxDelayMs, o.ErrorMessage)
		d.End = c.end(false, c.Attempt-1, msg)
		return d
	}
	if cls.Class == ClassRetryable && cls.HasHint && s.RespectRetryAfter && cls.RetryAfterMs > delay {
		delay = cls.RetryAfterMs
	}
	if s.MaxDelayMs > 0 && delay > s.MaxDelayMs {
		delay = s.MaxDelayMs
	}
	if cls.Class == ClassUsageLimit {
		d.UsageLimit = true
		d.BlockMs = DefaultUsageLimitBlockMs
		if cls.HasHint {
			d.BlockMs = cls.RetryAfterMs
		}
	}
	d.Retry = true
	d.Start = StartEvent{
		Attempt:      c.Attempt,
		MaxAttempts:  s.MaxRetries,
		DelayMs:      delay,
		ErrorMessage: o.ErrorMessage,
	}
	return d
}

// Cancel ends an active chain because the user cancelled its backoff wait
// (abort_retry, abort, Esc). It returns nil when no chain is active. Call
// it only while a backoff timer is pending: outside a wait abort_retry is
// a no-op (SPEC 5), which is the caller's check.
func (c *Chain) Cancel() *EndEvent {
	return c.end(false, c.Attempt, CancelledMessage)
}
