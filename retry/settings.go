package retry

import (
	"fmt"
	"math"
)

// Settings is the `retry` settings group.
type Settings struct {
	// Enabled is retry.enabled (default true).
	Enabled bool `json:"enabled"`
	// MaxRetries is retry.maxRetries (default 3).
	MaxRetries int `json:"maxRetries"`
	// BaseDelayMs is retry.baseDelayMs (default 2000).
	BaseDelayMs int64 `json:"baseDelayMs"`
	// RespectRetryAfter (opt-in) waits at least the provider's hint.
	RespectRetryAfter bool `json:"respectRetryAfter,omitempty"`
	// MaxDelayMs (opt-in, 0: no cap) caps the delay; a hint above the cap
	// fails the chain at once.
	MaxDelayMs int64 `json:"maxDelayMs,omitempty"`
}

// DefaultSettings are the original's defaults.
func DefaultSettings() Settings {
	return Settings{Enabled: true, MaxRetries: 3, BaseDelayMs: 2000}
}

// Validate rejects values the policy cannot run with.
func (s Settings) Validate() error {
	if s.MaxRetries < 0 {
		return fmt.Errorf("retry.maxRetries must be >= 0, got %d", s.MaxRetries)
	}
	if s.BaseDelayMs < 0 {
		return fmt.Errorf("retry.baseDelayMs must be >= 0, got %d", s.BaseDelayMs)
	}
	if s.MaxDelayMs < 0 {
		return fmt.Errorf("retry.maxDelayMs must be >= 0, got %d", s.MaxDelayMs)
	}
	return nil
}

// maxShift bounds the exponent so the delay cannot overflow int64.
const maxShift = 40

// Delay is retry.baseDelayMs * 2^(attempt-1) for a 1-based attempt.
func Delay(baseDelayMs int64, attempt int) int64 {
	if attempt < 1 || baseDelayMs <= 0 {
		return 0
	}
	shift := min(attempt-1, maxShift)
	if baseDelayMs > math.MaxInt64>>shift { // the shift would overflow
		return math.MaxInt64
	}
	return baseDelayMs << shift
}
