package retry

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hintNow is the fixed clock of the date and epoch cases.
var hintNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// SPEC 4: each retry-hint form is read, in milliseconds.
func TestParseRetryHint_Forms(t *testing.T) {
	epochIn90s := hintNow.Unix() + 90
	cases := []struct {
		name string
		text string
		now  time.Time
		want int64
	}{
		{"retry-after-ms equals", "retry-after-ms=1500", time.Time{}, 1500},
		{"retry-after-ms colon", "Retry-After-Ms: 250", time.Time{}, 250},
		{"retry-after-ms json", `{"retry-after-ms": "800"}`, time.Time{}, 800},
		{"retry-after seconds", "retry-after: 30", time.Time{}, 30_000},
		{"retry-after fractional seconds", "Retry-After: 1.5", time.Time{}, 1500},
		{"retry-after zero", "retry-after: 0", time.Time{}, 0},
		{"retry-after sentence end", "server said retry-after: 7.", time.Time{}, 7000},
		{"retry-after http date", "retry-after: Sun, 01 Jun 2025 12:01:00 GMT", hintNow, 60_000},
		{"retry-after http date lower case", "retry-after: sun, 1 jun 2025 12:00:10 gmt", hintNow, 10_000},
		{"x-ratelimit-reset-ms", "x-ratelimit-reset-ms: 1200", time.Time{}, 1200},
		{"x-ratelimit-reset seconds", "X-RateLimit-Reset: 20", time.Time{}, 20_000},
		{"x-ratelimit-reset epoch", "x-ratelimit-reset: " + strconv.FormatInt(epochIn90s, 10), hintNow, 90_000},
		{"x-ratelimit-reset-requests duration", "x-ratelimit-reset-requests: 1s", time.Time{}, 1000},
		{"x-ratelimit-reset-tokens duration", "x-ratelimit-reset-tokens: 6m0s", time.Time{}, 360_000},
		{"x-ratelimit-reset duration ms", "x-ratelimit-reset-tokens: 20ms", time.Time{}, 20},
		{"gemini retryDelay", `"retryDelay": "37s"`, time.Time{}, 37_000},
		{"prose try again in 20s", "Rate limit reached. Please try again in 20s.", time.Time{}, 20_000},
		{"prose retry in fractional", "Please retry in 3.5s.", time.Time{}, 3500},
		{"prose long fraction rounds up", "Please retry in 37.5883300251s.", time.Time{}, 37_589},
		{"prose retry after seconds", "retry after 30 seconds", time.Time{}, 30_000},
		{"prose compound", "try again in 1m30s", time.Time{}, 90_000},
		{"prose words", "Try again in 1 hour and 5 minutes", time.Time{}, 3_900_000},
		{"prose approximate", "try again in ~158 min", time.Time{}, 158 * 60_000},
		{"prose milliseconds", "try again in 6ms", time.Time{}, 6},
		{"ms form wins over seconds form", "retry-after: 3, retry-after-ms: 2900", time.Time{}, 2900},
		{"seconds wins over prose", "try again in 1 hour; retry-after: 5", time.Time{}, 5000},
		{"garbage form skipped for a later valid one", "retry-after: soon; x-ratelimit-reset-ms: 40", time.Time{}, 40},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseRetryHint(tc.text, tc.now)
			if !ok || got != tc.want {
				t.Fatalf("ParseRetryHint(%q) = (%d, %v), want (%d, true)", tc.text, got, ok, tc.want)
			}
		})
	}
}

// SPEC 4: negative, absurd, malformed or clockless absolute hints are rejected.
func TestParseRetryHint_RejectsGarbage(t *testing.T) {
	cases := []struct {
		name string
		text string
		now  time.Time
	}{
		{"empty", "", hintNow},
		{"no hint", "503 Service Unavailable", hintNow},
		{"negative seconds", "retry-after: -5", hintNow},
		{"negative ms", "retry-after-ms=-100", hintNow},
		{"trailing letters", "retry-after: 12abc", hintNow},
		{"two dots", "retry-after: 1.5.3", hintNow},
		{"not a number", "retry-after: soon", hintNow},
		{"absurd seconds", "retry-after: 99999999", hintNow},
		{"absurd ms", "retry-after-ms: 999999999999", hintNow},
		{"too many digits", "retry-after: 12345678901234567890", hintNow},
		{"date in the past", "retry-after: Sun, 01 Jun 2025 11:59:00 GMT", hintNow},
		{"date without clock", "retry-after: Sun, 01 Jun 2025 12:01:00 GMT", time.Time{}},
		{"bad date", "retry-after: Sun, 41 Jun 2025 12:01:00 GMT", hintNow},
		{"epoch without clock", "x-ratelimit-reset: 1748779290", time.Time{}},
		{"epoch in the past", "x-ratelimit-reset: 1600000000", hintNow},
		{"epoch far future", "x-ratelimit-reset: 1900000000", hintNow},
		{"prose without unit", "please retry after 30", hintNow},
		{"prose unknown unit", "try again in 3 fortnights", hintNow},
		{"prose absurd", "try again in 400 hours", hintNow},
		{"bare number", "wait 30 seconds", hintNow},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, ok := ParseRetryHint(tc.text, tc.now); ok {
				t.Fatalf("ParseRetryHint(%q) = (%d, true), want rejected", tc.text, got)
			}
		})
	}
}

// SPEC 4: the longest accepted hint is MaxHintMs (a week).
func TestParseRetryHint_Bound(t *testing.T) {
	if got, ok := ParseRetryHint("retry-after: 604800", time.Time{}); !ok || got != MaxHintMs {
		t.Fatalf("a week = (%d, %v), want (%d, true)", got, ok, MaxHintMs)
	}
	if _, ok := ParseRetryHint("retry-after: 604801", time.Time{}); ok {
		t.Fatalf("a week and a second accepted, want rejected")
	}
}

// SPEC 4: the headers' hint comes from retry-after-ms, retry-after (seconds
// or HTTP date), x-ratelimit-reset* and anthropic-ratelimit-*-reset, in
// that order of trust; garbage is skipped for the next valid form.
func TestParseRetryHintHeaders(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		headers map[string]string
		now     time.Time
		want    int64
		ok      bool
	}{
		{"none", nil, now, 0, false},
		{"retry-after-ms", map[string]string{"retry-after-ms": "1500", "retry-after": "9"}, now, 1500, true},
		{"retry-after seconds", map[string]string{"retry-after": "30"}, now, 30000, true},
		{"retry-after fractional", map[string]string{"retry-after": " 0.25 "}, now, 250, true},
		{"retry-after date", map[string]string{"retry-after": "Fri, 01 May 2026 12:01:00 GMT"}, now, 60000, true},
		{"retry-after date without clock", map[string]string{"retry-after": "Fri, 01 May 2026 12:01:00 GMT"}, time.Time{}, 0, false},
		{"retry-after date in the past", map[string]string{"retry-after": "Fri, 01 May 2026 11:00:00 GMT"}, now, 0, false},
		{"x-ratelimit-reset-ms", map[string]string{"x-ratelimit-reset-ms": "700"}, now, 700, true},
		{"x-ratelimit-reset seconds", map[string]string{"x-ratelimit-reset": "12"}, now, 12000, true},
		{"x-ratelimit-reset epoch", map[string]string{"x-ratelimit-reset": "1777636830"}, now, 30000, true},
		{"openai resets take the longest", map[string]string{"x-ratelimit-reset-requests": "1s", "x-ratelimit-reset-tokens": "6m0s"}, now, 360000, true},
		{"per-limit reset in seconds", map[string]string{"x-ratelimit-reset-tokens": "20"}, now, 20000, true},
		{"anthropic reset time", map[string]string{"anthropic-ratelimit-tokens-reset": "2026-05-01T12:00:45Z"}, now, 45000, true},
		{"invalid ms falls through to seconds", map[string]string{"retry-after-ms": "-5", "retry-after": "3"}, now, 3000, true},
		{"garbage", map[string]string{"retry-after": "soon", "retry-after-ms": "-5"}, now, 0, false},
		{"absurd", map[string]string{"retry-after": "99999999999"}, now, 0, false},
		{"above the bound of text hints", map[string]string{"retry-after-ms": strconv.FormatInt(MaxHintMs+1, 10)}, now, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.headers {
				h.Set(k, v)
			}
			got, ok := ParseRetryHintHeaders(h.Get, tc.now)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("ParseRetryHintHeaders(%v) = %d, %v; want %d, %v", tc.headers, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// SPEC 4: the provider's structured hint (Outcome.RetryAfterMs) comes
// first; the text is read when there is none or it is out of bounds.
func TestClassify_StructuredHintFirst(t *testing.T) {
	ms := func(v int64) *int64 { return &v }
	cases := []struct {
		name      string
		text      string
		hint      *int64
		wantMs    int64
		wantHint  bool
		wantClass Class
	}{
		{"structured only", "429 Too Many Requests", ms(2500), 2500, true, ClassRetryable},
		{"structured wins over text", "429 rate limit; retry-after: 30", ms(1200), 1200, true, ClassRetryable},
		{"zero is a hint", "503 Service Unavailable", ms(0), 0, true, ClassRetryable},
		{"negative falls back to text", "429 rate limit; retry-after: 30", ms(-1), 30000, true, ClassRetryable},
		{"absurd falls back to text", "429 rate limit", ms(MaxHintMs + 1), 0, false, ClassRetryable},
		{"old session: text only", "429 rate limit retry-after-ms=700", nil, 700, true, ClassRetryable},
		{"long structured wait is a usage limit", "429 Too Many Requests", ms(UsageLimitHintMs), UsageLimitHintMs, true, ClassUsageLimit},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := Outcome{StopReason: "error", ErrorMessage: tc.text, ErrorStatus: 429, RetryAfterMs: tc.hint}
			if strings.HasPrefix(tc.text, "503") {
				o.ErrorStatus = 503
			}
			got := Classify(o)
			if got.RetryAfterMs != tc.wantMs || got.HasHint != tc.wantHint || got.Class != tc.wantClass {
				t.Fatalf("Classify(%q, hint %v) = %+v, want hint %d/%t class %q", tc.text, tc.hint, got, tc.wantMs, tc.wantHint, tc.wantClass)
			}
		})
	}
}
