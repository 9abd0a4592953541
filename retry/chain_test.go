package retry

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

var (
	okOutcome      = Outcome{StopReason: "stop"}
	abortedOutcome = Outcome{StopReason: "aborted"}
	overloaded     = errOutcome("503 Service Unavailable: overloaded")
	fatalOutcome   = errOutcome("401 invalid x-api-key")
	overflowed     = errOutcome("prompt is too long: 213462 tokens > 200000 maximum")
)

// Next classifies o at now and decides, as the workflow does in two steps.
func (c *Chain) Next(o Outcome, s Settings, now time.Time) Decision {
	return c.Decide(o, ClassifyAt(o, now), s)
}

// wantRetry asserts a decision that starts the given attempt with the given delay.
func wantRetry(t *testing.T, d Decision, attempt, maxAttempts int, delayMs int64, msg string) {
	t.Helper()
	want := StartEvent{Attempt: attempt, MaxAttempts: maxAttempts, DelayMs: delayMs, ErrorMessage: msg}
	if !d.Retry || d.Start != want || d.End != nil {
		t.Fatalf("decision = %+v (end %+v), want retry with start %+v and no end", d, d.End, want)
	}
}

// wantEnd asserts a decision that ends the chain with the given event and retries nothing.
func wantEnd(t *testing.T, d Decision, want EndEvent) {
	t.Helper()
	if d.Retry || d.End == nil || *d.End != want {
		t.Fatalf("decision = %+v (end %+v), want no retry and end %+v", d, d.End, want)
	}
}

// wantNothing asserts a decision with no retry and no event.
func wantNothing(t *testing.T, d Decision) {
	t.Helper()
	if d.Retry || d.End != nil || d.UsageLimit {
		t.Fatalf("decision = %+v (end %+v), want nothing", d, d.End)
	}
}

// wantIdle asserts the chain has been reset.
func wantIdle(t *testing.T, c *Chain) {
	t.Helper()
	if *c != (Chain{}) || c.Active {
		t.Fatalf("chain = %+v, want idle (reset)", *c)
	}
}

// SPEC 3: the zero Chain is idle.
func TestRetry_ZeroChainIsIdle(t *testing.T) {
	var c Chain
	wantIdle(t, &c)
}

// SPEC 3 step 3-5 / SPEC 4: the attempt counter is incremented before the max check.
func TestRetry_AttemptIncrementedBeforeMaxCheck(t *testing.T) {
	s := DefaultSettings()
	s.MaxRetries = 1
	var c Chain
	wantRetry(t, c.Next(overloaded, s, time.Time{}), 1, 1, 2000, overloaded.ErrorMessage)
	if c.Attempt != 1 || !c.Active {
		t.Fatalf("after first error chain = %+v, want attempt 1 active", c)
	}
	// Attempt becomes 2 > maxRetries 1: the chain ends reporting attempt 1.
	wantEnd(t, c.Next(overloaded, s, time.Time{}), EndEvent{Success: false, Attempt: 1, FinalError: overloaded.ErrorMessage})
	wantIdle(t, &c)
}

// SPEC 4: start events carry the current 1-based attempt and maxAttempts.
func TestRetry_StartEventCarriesAttemptAndMax(t *testing.T) {
	s := DefaultSettings()
	s.MaxRetries = 5
	var c Chain
	for attempt := 1; attempt <= 5; attempt++ {
		o := errOutcome("HTTP 502 attempt " + strings.Repeat("x", attempt))
		d := c.Next(o, s, time.Time{})
		wantRetry(t, d, attempt, 5, Delay(2000, attempt), o.ErrorMessage)
		if d.Classification.Class != ClassRetryable {
			t.Fatalf("classification = %+v, want retryable", d.Classification)
		}
	}
}

// SPEC 4: defaults wait 2000, 4000, 8000 ms and the 4th error ends the chain
// with success:false, attempt 3 and the last error text.
func TestRetry_MaxExceededReportsLastAttempt(t *testing.T) {
	s := DefaultSettings()
	var c Chain
	for i, delay := range []int64{2000, 4000, 8000} {
		wantRetry(t, c.Next(overloaded, s, time.Time{}), i+1, 3, delay, overloaded.ErrorMessage)
	}
	last := errOutcome("529 overloaded again")
	wantEnd(t, c.Next(last, s, time.Time{}), EndEvent{Success: false, Attempt: 3, FinalError: last.ErrorMessage})
	wantIdle(t, &c)
}

// SPEC 4: maxRetries 0 means the first error ends at once, reporting attempt 0.
func TestRetry_MaxRetriesZeroEndsAtOnce(t *testing.T) {
	s := DefaultSettings()
	s.MaxRetries = 0
	var c Chain
	wantEnd(t, c.Next(overloaded, s, time.Time{}), EndEvent{Success: false, Attempt: 0, FinalError: overloaded.ErrorMessage})
	wantIdle(t, &c)
}

// SPEC 3: the first successful message after retries emits end{success:true, attempt} and resets.
func TestRetry_SuccessAfterRetriesEndsChain(t *testing.T) {
	s := DefaultSettings()
	var c Chain
	c.Next(overloaded, s, time.Time{})
	c.Next(overloaded, s, time.Time{})
	wantEnd(t, c.Next(okOutcome, s, time.Time{}), EndEvent{Success: true, Attempt: 2})
	wantIdle(t, &c)
}

// SPEC 3: success with no chain active emits nothing.
func TestRetry_SuccessWithoutChainEmitsNothing(t *testing.T) {
	for _, stop := range []string{"stop", "length", "toolUse"} {
		var c Chain
		wantNothing(t, c.Next(Outcome{StopReason: stop}, DefaultSettings(), time.Time{}))
		wantIdle(t, &c)
	}
}

// SPEC 5: cancelling during the wait ends the chain with "Retry cancelled" and resets.
func TestRetry_CancelDuringChain(t *testing.T) {
	s := DefaultSettings()
	var c Chain
	c.Next(overloaded, s, time.Time{})
	c.Next(overloaded, s, time.Time{})
	got := c.Cancel()
	want := EndEvent{Success: false, Attempt: 2, FinalError: CancelledMessage}
	if got == nil || *got != want {
		t.Fatalf("Cancel() = %+v, want %+v", got, want)
	}
	if CancelledMessage != "Retry cancelled" {
		t.Fatalf("CancelledMessage = %q, want the original's %q", CancelledMessage, "Retry cancelled")
	}
	wantIdle(t, &c)
}

// SPEC 5: abort_retry outside a chain is a harmless no-op.
func TestRetry_CancelWhenIdleIsNoop(t *testing.T) {
	var c Chain
	if got := c.Cancel(); got != nil {
		t.Fatalf("Cancel() on idle chain = %+v, want nil", got)
	}
	wantIdle(t, &c)
	// And twice in a row after a real cancel.
	c.Next(overloaded, DefaultSettings(), time.Time{})
	c.Cancel()
	if got := c.Cancel(); got != nil {
		t.Fatalf("second Cancel() = %+v, want nil", got)
	}
}

// SPEC 3 step 2 / SPEC 11: retry.enabled=false never starts a retry.
func TestRetry_DisabledNeverRetries(t *testing.T) {
	s := DefaultSettings()
	s.Enabled = false
	var c Chain
	for _, o := range []Outcome{overloaded, errOutcome("rate limit"), errOutcome("usage limit reached")} {
		d := c.Next(o, s, time.Time{})
		wantNothing(t, d)
		if !d.Classification.Class.Retryable() {
			t.Fatalf("classification of %q = %+v, want retryable (only the setting stops it)", o.ErrorMessage, d.Classification)
		}
		wantIdle(t, &c)
	}
}

// SPEC 3 / SPEC 11: switching retry off mid-chain ends the chain with success:false.
func TestRetry_DisabledMidChainEndsChain(t *testing.T) {
	s := DefaultSettings()
	var c Chain
	c.Next(overloaded, s, time.Time{})
	s.Enabled = false
	last := errOutcome("502 Bad Gateway")
	wantEnd(t, c.Next(last, s, time.Time{}), EndEvent{Success: false, Attempt: 1, FinalError: last.ErrorMessage})
	wantIdle(t, &c)
}

// SPEC 1 / SPEC 11: a context overflow is never retried; it goes to compaction.
func TestRetry_OverflowNeverRetried(t *testing.T) {
	var c Chain
	d := c.Next(overflowed, DefaultSettings(), time.Time{})
	wantNothing(t, d)
	if d.Classification.Class != ClassContextOverflow {
		t.Fatalf("classification = %+v, want context overflow", d.Classification)
	}
	wantIdle(t, &c)
}

// SPEC 3 [fix]: an overflow in the middle of a chain ends it with success:false.
func TestRetry_OverflowEndsActiveChain(t *testing.T) {
	s := DefaultSettings()
	var c Chain
	c.Next(overloaded, s, time.Time{})
	d := c.Next(overflowed, s, time.Time{})
	wantEnd(t, d, EndEvent{Success: false, Attempt: 1, FinalError: overflowed.ErrorMessage})
	if d.Classification.Class != ClassContextOverflow {
		t.Fatalf("classification = %+v, want context overflow", d.Classification)
	}
	wantIdle(t, &c)
}

// SPEC 11: a non-retryable error with no chain starts nothing and emits nothing.
func TestRetry_FatalWithoutChainEmitsNothing(t *testing.T) {
	var c Chain
	wantNothing(t, c.Next(fatalOutcome, DefaultSettings(), time.Time{}))
	wantIdle(t, &c)
}

// SPEC 3 [fix]: a non-retryable error mid-chain ends it with success:false and finalError.
func TestRetry_NonRetryableMidChainEndsChain(t *testing.T) {
	s := DefaultSettings()
	var c Chain
	c.Next(overloaded, s, time.Time{})
	c.Next(overloaded, s, time.Time{})
	wantEnd(t, c.Next(fatalOutcome, s, time.Time{}), EndEvent{Success: false, Attempt: 2, FinalError: fatalOutcome.ErrorMessage})
	wantIdle(t, &c)
}

// SPEC 3 [fix]: an abort mid-chain ends it with success:false.
func TestRetry_AbortMidChainEndsChain(t *testing.T) {
	cases := []struct {
		name string
		o    Outcome
		want string
	}{
		{"no message uses the default", abortedOutcome, AbortedMessage},
		{"message kept", Outcome{StopReason: "aborted", ErrorMessage: "Operation aborted by user"}, "Operation aborted by user"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSettings()
			var c Chain
			c.Next(overloaded, s, time.Time{})
			wantEnd(t, c.Next(tc.o, s, time.Time{}), EndEvent{Success: false, Attempt: 1, FinalError: tc.want})
			wantIdle(t, &c)
		})
	}
	t.Run("abort with no chain emits nothing", func(t *testing.T) {
		var c Chain
		wantNothing(t, c.Next(abortedOutcome, DefaultSettings(), time.Time{}))
	})
}

// SPEC 11: once reset, a new chain starts again at attempt 1 with the base delay.
func TestRetry_NewChainAfterReset(t *testing.T) {
	enders := map[string]func(c *Chain, s Settings){
		"success": func(c *Chain, s Settings) { c.Next(okOutcome, s, time.Time{}) },
		"cancel":  func(c *Chain, _ Settings) { c.Cancel() },
		"max exceeded": func(c *Chain, s Settings) {
			c.Next(overloaded, s, time.Time{})
			c.Next(overloaded, s, time.Time{})
			c.Next(overloaded, s, time.Time{})
		},
		"fatal": func(c *Chain, s Settings) { c.Next(fatalOutcome, s, time.Time{}) },
		"abort": func(c *Chain, s Settings) { c.Next(abortedOutcome, s, time.Time{}) },
	}
	for name, end := range enders {
		t.Run(name, func(t *testing.T) {
			s := DefaultSettings()
			var c Chain
			c.Next(overloaded, s, time.Time{})
			end(&c, s)
			wantIdle(t, &c)
			wantRetry(t, c.Next(overloaded, s, time.Time{}), 1, 3, 2000, overloaded.ErrorMessage)
		})
	}
}

// SPEC 3 step 7 / SPEC 4: usage-limit errors block the credential for the hint or 60 s.
func TestRetry_UsageLimitDecision(t *testing.T) {
	cases := []struct {
		name      string
		o         Outcome
		wantBlock int64
	}{
		{"no hint blocks for the default", errOutcome("usage limit reached"), DefaultUsageLimitBlockMs},
		{"retry-after seconds", errOutcome("usage_limit_reached; retry-after: 120"), 120_000},
		{"retry-after-ms", errOutcome("insufficient_quota retry-after-ms=4500"), 4500},
		{"structured type", Outcome{StopReason: "error", ErrorType: "insufficient_quota", ErrorMessage: "try again in 90s"}, 90_000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c Chain
			d := c.Next(tc.o, DefaultSettings(), time.Time{})
			if !d.UsageLimit || d.BlockMs != tc.wantBlock {
				t.Fatalf("decision = %+v, want usage limit blocking %d ms", d, tc.wantBlock)
			}
			// On the main path the wait stays the exponential delay.
			wantRetry(t, d, 1, 3, 2000, tc.o.ErrorMessage)
		})
	}
	t.Run("plain rate limit is not the usage-limit branch", func(t *testing.T) {
		var c Chain
		if d := c.Next(errOutcome("429 rate limit"), DefaultSettings(), time.Time{}); d.UsageLimit || d.BlockMs != 0 {
			t.Fatalf("decision = %+v, want no usage-limit branch", d)
		}
	})
}

// SPEC 3 step 7: a successful credential or model switch retries at once.
func TestRetry_UsageLimitSwitchedZeroesDelay(t *testing.T) {
	s := DefaultSettings()
	var c Chain
	c.Next(overloaded, s, time.Time{})
	d := c.Next(errOutcome("usage limit reached"), s, time.Time{})
	if d.Start.DelayMs != 4000 {
		t.Fatalf("delay before switch = %d, want 4000", d.Start.DelayMs)
	}
	d.Switched()
	wantRetry(t, d, 2, 3, 0, "usage limit reached")
}

// SPEC 4 [beyond]: hints do not change the wait unless retry.respectRetryAfter is on.
func TestRetry_RespectRetryAfterWaitsAtLeastHint(t *testing.T) {
	cases := []struct {
		name    string
		respect bool
		msg     string
		want    int64
	}{
		{"off by default ignores the hint", false, "429 rate limit; retry-after: 5", 2000},
		{"on waits the longer hint", true, "429 rate limit; retry-after: 5", 5000},
		{"on keeps the longer backoff", true, "429 rate limit; retry-after-ms=700", 2000},
		{"on without hint", true, "429 rate limit", 2000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSettings()
			s.RespectRetryAfter = tc.respect
			var c Chain
			wantRetry(t, c.Next(errOutcome(tc.msg), s, time.Time{}), 1, 3, tc.want, tc.msg)
		})
	}
	if DefaultSettings().RespectRetryAfter || DefaultSettings().MaxDelayMs != 0 {
		t.Fatalf("DefaultSettings() = %+v, want the [beyond] settings off", DefaultSettings())
	}
}

// SPEC 4 [beyond]: retry.maxDelayMs caps the wait.
func TestRetry_MaxDelayCapsDelay(t *testing.T) {
	s := DefaultSettings()
	s.MaxDelayMs = 5000
	var c Chain
	for i, want := range []int64{2000, 4000, 5000} {
		wantRetry(t, c.Next(overloaded, s, time.Time{}), i+1, 3, want, overloaded.ErrorMessage)
	}
	t.Run("respected hint equal to the cap is honoured", func(t *testing.T) {
		s := s
		s.MaxDelayMs = 3000
		s.RespectRetryAfter = true
		var c Chain
		msg := "429; retry-after: 3"
		wantRetry(t, c.Next(errOutcome(msg), s, time.Time{}), 1, 3, 3000, msg)
	})
}

// SPEC 4 [beyond]: a hint above retry.maxDelayMs fails the chain at once with a clear message.
func TestRetry_HintAboveMaxDelayEndsChain(t *testing.T) {
	s := DefaultSettings()
	s.MaxDelayMs = 10_000
	msg := "429 rate limit; retry-after: 60"
	var c Chain
	c.Next(overloaded, s, time.Time{})
	d := c.Next(errOutcome(msg), s, time.Time{})
	if d.Retry || d.End == nil || d.End.Success || d.End.Attempt != 1 {
		t.Fatalf("decision = %+v (end %+v), want end{success:false, attempt:1}", d, d.End)
	}
	for _, part := range []string{"retry.maxDelayMs", "60000", "10000", msg} {
		if !strings.Contains(d.End.FinalError, part) {
			t.Fatalf("finalError = %q, want it to contain %q", d.End.FinalError, part)
		}
	}
	wantIdle(t, &c)
}

// SPEC 8: isRetrying says whether a chain is active.
func TestRetry_IsRetryingDuringChain(t *testing.T) {
	s := DefaultSettings()
	var c Chain
	steps := []struct {
		o    Outcome
		want bool
	}{
		{overloaded, true},
		{overloaded, true},
		{okOutcome, false},
		{fatalOutcome, false},
	}
	for i, st := range steps {
		c.Next(st.o, s, time.Time{})
		if c.Active != st.want {
			t.Fatalf("step %d: Active = %v, want %v", i, c.Active, st.want)
		}
	}
}

// SPEC 3: the decision carries the classification of the message it answers.
func TestRetry_DecisionCarriesClassification(t *testing.T) {
	var c Chain
	d := c.Next(overloaded, DefaultSettings(), time.Time{})
	if want := Classify(overloaded); !reflect.DeepEqual(d.Classification, want) {
		t.Fatalf("classification = %+v, want %+v", d.Classification, want)
	}
}
