package retry

import (
	"strings"
	"testing"
)

// SPEC 4: the defaults are the original's (enabled, 3 retries, 2000 ms base).
func TestSettings_Defaults(t *testing.T) {
	want := Settings{Enabled: true, MaxRetries: 3, BaseDelayMs: 2000}
	if got := DefaultSettings(); got != want {
		t.Fatalf("DefaultSettings() = %+v, want %+v", got, want)
	}
	if err := DefaultSettings().Validate(); err != nil {
		t.Fatalf("DefaultSettings().Validate() = %v, want nil", err)
	}
}

// SPEC 8: invalid values are rejected with a message naming the key.
func TestSettings_ValidateNamesKey(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(*Settings)
		wantKey string
	}{
		{"negative maxRetries", func(s *Settings) { s.MaxRetries = -1 }, "retry.maxRetries"},
		{"negative baseDelayMs", func(s *Settings) { s.BaseDelayMs = -1 }, "retry.baseDelayMs"},
		{"negative maxDelayMs", func(s *Settings) { s.MaxDelayMs = -1 }, "retry.maxDelayMs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := DefaultSettings()
			tc.mutate(&s)
			err := s.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.wantKey) {
				t.Fatalf("Validate(%+v) = %v, want an error naming %s", s, err, tc.wantKey)
			}
		})
	}
	t.Run("zero values are valid", func(t *testing.T) {
		if err := (Settings{}).Validate(); err != nil {
			t.Fatalf("Validate(zero) = %v, want nil", err)
		}
	})
}
