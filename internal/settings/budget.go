package settings

import (
	"math"
	"strconv"
	"strings"

	"github.com/durableagent/durableagent/agent"
)

// Budget is the `budget` group: a prompt's spending limits (0: no limit).
// They travel with each prompt (workflows.PromptInput.Budget).
type Budget struct {
	// MaxCostUsd is US dollars as text ("5", "0.50"): the settings know
	// whole numbers, not fractions.
	MaxCostUsd    string        `json:"maxCostUsd"`
	MaxTokens     int64         `json:"maxTokens"`
	MaxDurationMs int64         `json:"maxDurationMs"`
	Session       SessionBudget `json:"session"`
}

// SessionBudget is budget.session: the limits on a session, its earlier
// prompts counted.
type SessionBudget struct {
	MaxCostUsd string `json:"maxCostUsd"`
	MaxTokens  int64  `json:"maxTokens"`
}

// maxUsd bounds a dollar limit.
const maxUsd = 1_000_000

// checkUsd accepts a dollar amount from 0 to maxUsd ("" is 0).
func checkUsd(v string) string {
	if _, ok := parseUsd(v); !ok {
		return "must be US dollars from 0 (no limit) to 1000000, e.g. 5 or 0.50"
	}
	return ""
}

func parseUsd(v string) (float64, bool) {
	return parseAmount(strings.TrimPrefix(strings.TrimSpace(v), "$"), maxUsd)
}

// parseAmount reads a number from 0 to max ("" is 0).
func parseAmount(v string, max float64) (float64, bool) {
	if v == "" {
		return 0, true
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || f < 0 || f > max {
		return 0, false
	}
	return f, true
}

// Limits are the budget as a prompt carries it.
func (b Budget) Limits() agent.BudgetLimits {
	cost, _ := parseUsd(b.MaxCostUsd)
	sessionCost, _ := parseUsd(b.Session.MaxCostUsd)
	return agent.BudgetLimits{
		MaxCostUsd: cost, MaxTokens: b.MaxTokens, MaxDurationMs: b.MaxDurationMs,
		SessionLimits: agent.SessionLimits{SessionMaxCostUsd: sessionCost, SessionMaxTokens: b.Session.MaxTokens},
	}
}
