package retry

import (
	"regexp"
	"testing"
	"time"
)

// Fuzz targets of the classifier and the retry-hint parser. `go test`
// runs them on their seeds (the f.Add calls and testdata/fuzz/<Name>/);
// fuzzing itself is a bounded, documented command (docs/reliability.md):
//
//	go test -run='^$' -fuzz='^FuzzClassify$' -fuzztime=30s ./retry/
//	go test -run='^$' -fuzz='^FuzzParseRetryHint$' -fuzztime=30s ./retry/

// asciiUpper upper-cases ASCII letters only: the patterns are matched
// case-insensitively, but Unicode case mapping can change a letter into
// one outside its case-folding orbit (ToUpper("ı") is "I"), which no
// case-insensitive matcher is expected to equate.
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func shouldRetryOf(v int8) *bool {
	switch {
	case v > 0:
		return boolPtr(true)
	case v < 0:
		return boolPtr(false)
	}
	return nil
}

var knownClasses = map[Class]bool{ClassNone: true, ClassRetryable: true,
	ClassUsageLimit: true, ClassContextOverflow: true, ClassFatal: true}

// FuzzClassify checks the SPEC 2 invariants on arbitrary outcomes: no
// panic, a known class with a named pattern, only errors are retried,
// overflow is checked first (whatever else matched),
// x-should-retry is obeyed, matching is case-insensitive, status numbers
// count as whole numbers only, and the hint is bounded.
func FuzzClassify(f *testing.F) {
	f.Add("error", "503 Service Unavailable", 0, "", int8(0), int32(0), int32(0), int32(0))
	f.Add("error", "Overloaded", 529, "overloaded_error", int8(0), int32(0), int32(0), int32(0))
	f.Add("error", "prompt is too long: 213462 tokens > 200000 maximum", 400, "invalid_request_error", int8(1), int32(0), int32(0), int32(0))
	f.Add("error", "usage limit reached, retry-after-ms: 1500", 429, "", int8(0), int32(0), int32(0), int32(0))
	f.Add("error", "401 invalid x-api-key", 401, "authentication_error", int8(-1), int32(0), int32(0), int32(0))
	f.Add("stop", "", 0, "", int8(0), int32(190000), int32(20000), int32(200000))
	f.Add("aborted", "Request was aborted", 0, "", int8(0), int32(0), int32(0), int32(0))
	f.Add("error", "model-0429 used 15000 tokens on a 1504x1504 image", 200, "", int8(0), int32(0), int32(0), int32(0))
	f.Add("error", "connection error: model call did not finish (heartbeat timeout; the worker may have died)", 0, "", int8(0), int32(0), int32(0), int32(0))
	f.Add("error", "400 status code (no body)", 0, "", int8(0), int32(0), int32(0), int32(0))
	f.Fuzz(func(t *testing.T, stop, msg string, status int, typ string, shouldRetry int8, input, cacheRead, window int32) {
		o := Outcome{StopReason: stop, ErrorMessage: msg, ErrorStatus: status, ErrorType: typ,
			ShouldRetry: shouldRetryOf(shouldRetry), InputTokens: int(input),
			CacheReadTokens: int(cacheRead), ContextWindow: int(window)}
		c := Classify(o)
		if !knownClasses[c.Class] {
			t.Fatalf("Classify(%+v) = unknown class %q", o, c.Class)
		}
		if c.Class != ClassNone && c.Pattern == "" {
			t.Fatalf("Classify(%+v) = %q without a pattern", o, c.Class)
		}
		if again := Classify(o); again != c {
			t.Fatalf("Classify is not deterministic: %+v then %+v", c, again)
		}
		if stop != "error" {
			// SPEC 2: only an error is retried; a non-error can only be a
			// silent overflow (and an abort not even that).
			if c.Class != ClassNone && c.Class != ClassContextOverflow || stop == "aborted" && c.Class != ClassNone {
				t.Fatalf("Classify(%+v) = %q for stopReason %q", o, c.Class, stop)
			}
			if c.HasHint || c.RetryAfterMs != 0 {
				t.Fatalf("Classify(%+v) read a hint from a non-error", o)
			}
			return
		}
		if o.ShouldRetry != nil && c.Class != ClassContextOverflow {
			if *o.ShouldRetry && !c.Class.Retryable() || !*o.ShouldRetry && c.Class != ClassFatal {
				t.Fatalf("Classify(%+v) = %q against x-should-retry %t", o, c.Class, *o.ShouldRetry)
			}
		}
		ms, ok := ParseRetryHint(msg, time.Time{})
		if c.HasHint != ok || c.RetryAfterMs != ms || ms < 0 || ms > MaxHintMs {
			t.Fatalf("Classify(%+v) hint %d/%t, ParseRetryHint %d/%t", o, c.RetryAfterMs, c.HasHint, ms, ok)
		}
		// Case-insensitive matching (ASCII case; see asciiUpper).
		up := o
		up.ErrorMessage = asciiUpper(msg)
		if cu := Classify(up); cu.Class != c.Class || cu.HasHint != c.HasHint || cu.RetryAfterMs != c.RetryAfterMs {
			t.Fatalf("upper-casing %q changed the verdict: %+v -> %+v", msg, c, cu)
		}
		// [fix] whole numbers only: digits glued to either end of a text
		// that is not retryable never make it retryable, because a status
		// number inside a longer digit run is not a status.
		if c.Class == ClassFatal && status == 0 && typ == "" && o.ShouldRetry == nil {
			for _, glued := range []string{msg + "15031", "15031" + msg} {
				g := o
				g.ErrorMessage = glued
				if cg := Classify(g); cg.Class.Retryable() {
					t.Fatalf("gluing digits to %q made it %q (pattern %q)", msg, cg.Class, cg.Pattern)
				}
			}
		}
	})
}

// retryAfterMsForm is the first form ParseRetryHint tries.
var retryAfterMsForm = regexp.MustCompile(`(?i)retry-after-ms`)

// FuzzParseRetryHint checks the hint parser on arbitrary text: no panic,
// a hint is within [0, MaxHintMs] and 0 when absent, case does not
// matter, and an explicit retry-after-ms hint is read exactly whatever
// text comes before it.
func FuzzParseRetryHint(f *testing.F) {
	f.Add("retry-after-ms=1500", int64(0), uint32(250), "")
	f.Add("429 Too Many Requests; retry-after: 2.5", int64(1700000000), uint32(1), "rate limited")
	f.Add("retry-after: Wed, 21 Oct 2015 07:28:00 GMT", int64(1445412400), uint32(0), "")
	f.Add(`{"x-ratelimit-reset": "1700000060"}`, int64(1700000000), uint32(99), "{")
	f.Add("x-ratelimit-reset-tokens: 6m0s", int64(0), uint32(7), "")
	f.Add(`"retryDelay": "37s"`, int64(0), uint32(604800000), "gemini")
	f.Add("Please try again in 1 hour 5 minutes.", int64(0), uint32(12), "usage limit")
	f.Add("retry after 30", int64(0), uint32(3), "try again in")
	f.Add("retry-after-ms: 99999999999999999", int64(0), uint32(604800001), "")
	f.Fuzz(func(t *testing.T, text string, nowUnix int64, n uint32, prefix string) {
		var now time.Time
		if nowUnix > 0 && nowUnix < 1<<40 {
			now = time.Unix(nowUnix, 0)
		}
		ms, ok := ParseRetryHint(text, now)
		if !ok && ms != 0 || ms < 0 || ms > MaxHintMs {
			t.Fatalf("ParseRetryHint(%q) = %d, %t", text, ms, ok)
		}
		if ms2, ok2 := ParseRetryHint(text, now); ms2 != ms || ok2 != ok {
			t.Fatalf("ParseRetryHint(%q) is not deterministic", text)
		}
		if msU, okU := ParseRetryHint(asciiUpper(text), now); msU != ms || okU != ok {
			t.Fatalf("ParseRetryHint(%q) = %d/%t but upper-cased %d/%t", text, ms, ok, msU, okU)
		}
		// retry-after-ms comes first: after any text that does not itself
		// hold that form, it is read exactly (and refused above the bound).
		if retryAfterMsForm.MatchString(prefix) {
			return
		}
		got, found := ParseRetryHint(prefix+" retry-after-ms: "+uitoa(n), now)
		switch {
		case int64(n) <= MaxHintMs && (!found || got != int64(n)):
			t.Fatalf("retry-after-ms %d after %q read as %d/%t", n, prefix, got, found)
		case int64(n) > MaxHintMs && found && got == int64(n):
			t.Fatalf("retry-after-ms %d above the bound was accepted", n)
		}
	})
}

func uitoa(n uint32) string {
	if n == 0 {
		return "0"
	}
	var b [10]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}
