package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

// Issue 22: the budget keys load from the environment and the settings
// file into the limits a prompt carries, and reject bad values in one
// line that names the key.
func TestBudgetKeys(t *testing.T) {
	if l := Defaults().Budget.Limits(); l.Any() {
		t.Fatalf("default limits %+v, want none", l)
	}
	home := t.TempDir()
	load := func(env map[string]string) (Settings, error) {
		env["DURABLE_AGENT_HOME"] = home
		return loadEnv(t, env)
	}
	s, err := load(map[string]string{
		"DURABLE_AGENT_BUDGET_MAXCOSTUSD":         "5.25",
		"DURABLE_AGENT_BUDGET_MAXTOKENS":          "200000",
		"DURABLE_AGENT_BUDGET_MAXDURATIONMS":      "3600000",
		"DURABLE_AGENT_BUDGET_SESSION_MAXCOSTUSD": "$20",
		"DURABLE_AGENT_BUDGET_SESSION_MAXTOKENS":  "1000000",
	})
	want := agent.BudgetLimits{MaxCostUsd: 5.25, MaxTokens: 200000, MaxDurationMs: 3600000, SessionLimits: agent.SessionLimits{SessionMaxCostUsd: 20, SessionMaxTokens: 1000000}}
	if err != nil || s.Budget.Limits() != want {
		t.Fatalf("load: %+v %v, want %+v", s.Budget.Limits(), err, want)
	}

	file := filepath.Join(t.TempDir(), "settings.yaml")
	if err := os.WriteFile(file, []byte("budget:\n  maxCostUsd: 0.5\n  session:\n    maxTokens: 70\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err = load(map[string]string{"DURABLE_AGENT_CONFIG": file})
	if err != nil || s.Budget.Limits() != (agent.BudgetLimits{MaxCostUsd: 0.5, SessionLimits: agent.SessionLimits{SessionMaxTokens: 70}}) {
		t.Fatalf("file: %+v %v", s.Budget.Limits(), err)
	}

	for name, tc := range map[string]struct{ key, value, want string }{
		"cost not a number":    {"DURABLE_AGENT_BUDGET_MAXCOSTUSD", "five", "budget.maxCostUsd: must be US dollars from 0 (no limit) to 1000000"},
		"negative cost":        {"DURABLE_AGENT_BUDGET_MAXCOSTUSD", "-1", "budget.maxCostUsd: must be US dollars"},
		"NaN cost":             {"DURABLE_AGENT_BUDGET_SESSION_MAXCOSTUSD", "NaN", "budget.session.maxCostUsd: must be US dollars"},
		"negative tokens":      {"DURABLE_AGENT_BUDGET_MAXTOKENS", "-5", "budget.maxTokens: must be a whole number >= 0"},
		"fractional tokens":    {"DURABLE_AGENT_BUDGET_SESSION_MAXTOKENS", "1.5", "budget.session.maxTokens: must be a whole number"},
		"duration past 30days": {"DURABLE_AGENT_BUDGET_MAXDURATIONMS", "2592000001", "budget.maxDurationMs: must be at most 2592000000 (30 days)"},
	} {
		_, err := load(map[string]string{tc.key: tc.value})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line with %q", name, err, tc.want)
		}
	}
}
