package session

import (
	"fmt"
	"slices"
	"strings"
)

// SettingsKey is the aside key of a session's own settings (Settings):
// the session's first prompt records them, every later prompt runs with
// them, and only an explicit change replaces them.
const SettingsKey = "session-settings"

// CustomSettingsChange is the CustomType of the custom entry that records
// an explicit change of the session's settings in the file (its Data is
// a SettingsChange).
const CustomSettingsChange = "session_settings_change"

// Settings are the settings that decide what the model may do in a
// session (tools enabled, approval policy): they belong
// to the session, not to whoever sends a prompt. The model and thinking
// level are the session's through its model_change and
// thinking_level_change entries.
type Settings struct {
	Tools             []string `json:"tools"`
	RequireApproval   []string `json:"requireApproval"`
	Policy            []string `json:"policy"`
	ApprovalTimeoutMs int64    `json:"approvalTimeoutMs,omitempty"`
	// SessionMaxTokens and SessionMaxCostUsd are the session's budget
	// (budget.session.*): a prompt from another terminal cannot raise it.
	SessionMaxTokens  int64   `json:"sessionMaxTokens,omitempty"`
	SessionMaxCostUsd float64 `json:"sessionMaxCostUsd,omitempty"`
}

// SettingsChange is an explicit change of one session setting, as the
// user wrote it.
type SettingsChange struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// SettingKeys are the settings keys a session owns, in the order
// differences are named.
var SettingKeys = []string{
	"tools.enabled", "tools.requireApproval", "tools.policy", "tools.approvalTimeoutMs",
	"budget.session.maxTokens", "budget.session.maxCostUsd",
}

// With returns s with key's value taken from from (the settings of a
// prompt built with the new value); an unknown key is an error.
func (s Settings) With(key string, from Settings) (Settings, error) {
	switch key {
	case "tools.enabled":
		s.Tools = slices.Clone(from.Tools)
	case "tools.requireApproval":
		s.RequireApproval = slices.Clone(from.RequireApproval)
	case "tools.policy":
		s.Policy = slices.Clone(from.Policy)
	case "tools.approvalTimeoutMs":
		s.ApprovalTimeoutMs = from.ApprovalTimeoutMs
	case "budget.session.maxTokens":
		s.SessionMaxTokens = from.SessionMaxTokens
	case "budget.session.maxCostUsd":
		s.SessionMaxCostUsd = from.SessionMaxCostUsd
	default:
		return s, fmt.Errorf("%q is not a session setting (one of %s)", key, strings.Join(SettingKeys, ", "))
	}
	return s, nil
}

// Differences names the keys whose values differ between s and o.
func (s Settings) Differences(o Settings) []string {
	var keys []string
	for _, k := range SettingKeys {
		x, _ := Settings{}.With(k, s)
		y, _ := Settings{}.With(k, o)
		if !slices.Equal(x.Tools, y.Tools) || !slices.Equal(x.RequireApproval, y.RequireApproval) ||
			!slices.Equal(x.Policy, y.Policy) || x.ApprovalTimeoutMs != y.ApprovalTimeoutMs ||
			x.SessionMaxTokens != y.SessionMaxTokens || x.SessionMaxCostUsd != y.SessionMaxCostUsd {
			keys = append(keys, k)
		}
	}
	return keys
}
