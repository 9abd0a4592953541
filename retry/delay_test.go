package retry

import (
	"math"
	"testing"
)

// SPEC 4: delayMs = baseDelayMs * 2^(attempt-1); defaults give 2000, 4000, 8000.
func TestRetry_DefaultDelaysDouble(t *testing.T) {
	base := DefaultSettings().BaseDelayMs
	cases := []struct {
		attempt int
		want    int64
	}{
		{1, 2000},
		{2, 4000},
		{3, 8000},
		{4, 16000},
		{10, 2000 << 9},
	}
	for _, tc := range cases {
		if got := Delay(base, tc.attempt); got != tc.want {
			t.Errorf("Delay(%d, %d) = %d, want %d", base, tc.attempt, got, tc.want)
		}
	}
}

// SPEC 4: attempts are 1-based; attempt 0 (idle) or below, and a zero base, wait nothing.
func TestDelay_NoAttemptOrNoBaseIsZero(t *testing.T) {
	cases := []struct {
		name    string
		base    int64
		attempt int
	}{
		{"attempt 0", 2000, 0},
		{"negative attempt", 2000, -3},
		{"zero base", 0, 3},
		{"negative base", -2000, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Delay(tc.base, tc.attempt); got != 0 {
				t.Fatalf("Delay(%d, %d) = %d, want 0", tc.base, tc.attempt, got)
			}
		})
	}
}

// SPEC 4: huge attempts or bases never overflow into a negative or zero wait.
func TestDelay_HugeAttemptsDoNotOverflow(t *testing.T) {
	bases := []int64{1, 2000, 60_000, 1 << 40, math.MaxInt64}
	attempts := []int{40, 41, 62, 63, 64, 1000, math.MaxInt32, math.MaxInt}
	for _, base := range bases {
		for _, attempt := range attempts {
			if got := Delay(base, attempt); got <= 0 {
				t.Errorf("Delay(%d, %d) = %d, want > 0", base, attempt, got)
			}
		}
	}
}

// SPEC 4: with realistic bases the delay never shrinks as attempts grow.
func TestDelay_NeverShrinks(t *testing.T) {
	for _, base := range []int64{1, 500, 2000, 60_000} {
		prev := int64(0)
		for attempt := 1; attempt <= 200; attempt++ {
			got := Delay(base, attempt)
			if got < prev {
				t.Fatalf("Delay(%d, %d) = %d < Delay(%d, %d) = %d", base, attempt, got, base, attempt-1, prev)
			}
			prev = got
		}
	}
}
