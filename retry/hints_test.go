package retry

import (
	"strconv"
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
