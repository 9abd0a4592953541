package agent

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// EventUsage is emitted after each model call of a prompt that has a
// budget (any budget.* limit set): the usage so far and the limits, so a
// client can show "$0.42 of $5.00". A prompt without a budget emits it
// only after usage no answer's message_end carries (summary calls,
// sub-agents): the latest one plus the answers' usage since is the
// prompt's figure (the one its state query and prompt_end have).
const EventUsage = "usage_update"

// Spend is what model calls have spent: tokens by kind and the cost in US
// dollars from the model's configured prices (model.prices).
type Spend struct {
	Input      int     `json:"input"`
	Output     int     `json:"output"`
	CacheRead  int     `json:"cacheRead"`
	CacheWrite int     `json:"cacheWrite"`
	CostUsd    float64 `json:"costUsd"`
	// Unpriced says the model has no price in model.prices: CostUsd
	// counts nothing, only tokens are counted, and budget.maxCostUsd
	// cannot stop the prompt.
	Unpriced bool `json:"unpriced,omitempty"`
	// Unmetered counts the model attempts that reported no usage (a lost
	// worker, a call aborted or failed before the provider reported any):
	// they count nothing.
	Unmetered int `json:"unmetered,omitempty"`
}

// Tokens is what budget.maxTokens counts: input plus output tokens.
func (s Spend) Tokens() int64 { return int64(s.Input) + int64(s.Output) }

// Add counts the usage of one model attempt (nil: an attempt that
// reported none).
func (s *Spend) Add(u *Usage) {
	if u == nil {
		s.Unmetered++
		return
	}
	*s = s.Plus(Spend{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite, CostUsd: u.Cost.Total})
}

// Usage is s as the usage of one message (a sub-agent's, on its task
// call's result: session.Spent counts it).
func (s Spend) Usage() *Usage {
	return &Usage{Input: s.Input, Output: s.Output, CacheRead: s.CacheRead, CacheWrite: s.CacheWrite,
		TotalTokens: s.Input + s.Output + s.CacheRead + s.CacheWrite, Cost: UsageCost{Total: s.CostUsd}}
}

// Plus is s and o together (a session's earlier prompts and this one).
func (s Spend) Plus(o Spend) Spend {
	s.Input += o.Input
	s.Output += o.Output
	s.CacheRead += o.CacheRead
	s.CacheWrite += o.CacheWrite
	s.CostUsd = roundCost(s.CostUsd + o.CostUsd)
	s.Unpriced = s.Unpriced || o.Unpriced
	s.Unmetered += o.Unmetered
	return s
}

// BudgetLimits are a prompt's spending limits (settings group budget); 0
// is no limit.
type BudgetLimits struct {
	// MaxCostUsd stops the prompt once its model calls cost this much.
	MaxCostUsd float64 `json:"maxCostUsd,omitempty"`
	// MaxTokens stops the prompt once its model calls used this many
	// input plus output tokens.
	MaxTokens int64 `json:"maxTokens,omitempty"`
	// MaxDurationMs stops the prompt this long (wall time, a durable
	// timer) after it started.
	MaxDurationMs int64 `json:"maxDurationMs,omitempty"`
	SessionLimits
}

// SessionLimits are the limits on the session, its earlier prompts
// counted too: the session keeps them (session.Settings).
type SessionLimits struct {
	SessionMaxCostUsd float64 `json:"sessionMaxCostUsd,omitempty" key:"budget.session.maxCostUsd"`
	SessionMaxTokens  int64   `json:"sessionMaxTokens,omitempty" key:"budget.session.maxTokens"`
}

// Any reports whether a limit is set.
func (b BudgetLimits) Any() bool { return b != BudgetLimits{} }

// HasSession reports whether a session-wide limit is set.
func (b BudgetLimits) HasSession() bool { return b.SessionMaxCostUsd > 0 || b.SessionMaxTokens > 0 }

// Validate reports the bad limits in one line.
func (b BudgetLimits) Validate() error {
	var bad []string
	for _, c := range []struct {
		key string
		neg bool
	}{
		{"budget.maxCostUsd", b.MaxCostUsd < 0 || b.MaxCostUsd != b.MaxCostUsd},
		{"budget.maxTokens", b.MaxTokens < 0},
		{"budget.maxDurationMs", b.MaxDurationMs < 0},
		{"budget.session.maxCostUsd", b.SessionMaxCostUsd < 0 || b.SessionMaxCostUsd != b.SessionMaxCostUsd},
		{"budget.session.maxTokens", b.SessionMaxTokens < 0},
	} {
		if c.neg {
			bad = append(bad, c.key)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s must be >= 0 (0: no limit)", strings.Join(bad, ", "))
	}
	return nil
}

// Budget is the budget part of the state query: what the prompt spent,
// what the session spent with it, the limits and, once one was reached,
// which.
type Budget struct {
	Limits BudgetLimits `json:"limits"`
	// Deadline is when budget.maxDurationMs is reached (unset: no limit).
	Deadline *time.Time `json:"deadline,omitempty"`
	// SessionUsage is the session's earlier prompts plus this one (set
	// when a session-wide limit is).
	SessionUsage *Spend `json:"sessionUsage,omitempty"`
	// Reached names the limit that stopped the prompt
	// ("budget.maxCostUsd 5.00 reached: spent 5.03").
	Reached string `json:"reached,omitempty"`
}

// FormatUsd writes dollars with at least two decimals and at most six:
// 5 is "5.00", 5.0312 is "5.0312".
func FormatUsd(v float64) string {
	s := strconv.FormatFloat(roundCost(v), 'f', 6, 64)
	s = strings.TrimRight(s, "0")
	if i := strings.IndexByte(s, '.'); len(s)-i-1 < 2 {
		s += strings.Repeat("0", 2-(len(s)-i-1))
	}
	return s
}

// usageLine renders a usage_update for people:
// "usage: 1200 tokens of 5000, $0.42 of $5.00".
func usageLine(s Spend, b *Budget) string {
	var l BudgetLimits
	if b != nil {
		l = b.Limits
	}
	line := fmt.Sprintf("usage: %d tokens", s.Tokens())
	if l.MaxTokens > 0 {
		line += fmt.Sprintf(" of %d", l.MaxTokens)
	}
	if s.Unpriced {
		return line + " (no price for this model: cost not counted)"
	}
	line += ", $" + FormatUsd(s.CostUsd)
	if l.MaxCostUsd > 0 {
		line += " of $" + FormatUsd(l.MaxCostUsd)
	}
	return line
}
