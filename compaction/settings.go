package compaction

import "fmt"

// Settings is the `compaction` settings group.
type Settings struct {
	// Enabled is compaction.enabled (default true). When false, neither
	// threshold nor overflow compaction runs; an overflow then fails the
	// prompt with OverflowCompactionDisabled.
	Enabled bool `json:"enabled"`
	// ReserveTokens is compaction.reserveTokens (default 16384): the room
	// kept free for the next reply. The threshold uses the larger of this
	// and 15% of the window (see ShouldCompact).
	ReserveTokens int `json:"reserveTokens"`
	// KeepRecentTokens is compaction.keepRecentTokens (default 20000): about
	// how many tokens of the newest messages are kept verbatim (see PlanCut).
	KeepRecentTokens int `json:"keepRecentTokens"`
	// AutoContinue is compaction.autoContinue (default true): after an
	// overflow compaction, the interrupted turn is retried once on its own.
	AutoContinue bool `json:"autoContinue"`
}

// DefaultSettings are the product's defaults: enabled, 16384 reserved,
// 20000 kept, auto-continue on.
func DefaultSettings() Settings {
	return Settings{
		Enabled:          true,
		ReserveTokens:    16384,
		KeepRecentTokens: 20000,
		AutoContinue:     true,
	}
}

// Validate rejects values the planner cannot run with. Zero is allowed for
// both token counts: a zero reserve leaves only the 15% floor, and a zero
// keep keeps the smallest valid tail.
func (s Settings) Validate() error {
	if s.ReserveTokens < 0 {
		return fmt.Errorf("compaction.reserveTokens must be >= 0, got %d", s.ReserveTokens)
	}
	if s.KeepRecentTokens < 0 {
		return fmt.Errorf("compaction.keepRecentTokens must be >= 0, got %d", s.KeepRecentTokens)
	}
	return nil
}
