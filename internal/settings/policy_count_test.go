package settings

import (
	"strings"
	"testing"
)

// Issue 37 item 10 (docs/spec.md 15.3.1): too many tools.policy rules are
// refused in one short line with the limit the spec gives (91: a prompt
// holds at most 100 rules, the default policy's 9 among them).
func TestPolicy_TooManyRulesOneShortLine(t *testing.T) {
	rules := strings.TrimSuffix(strings.Repeat("deny bash prefix:git push --force-with-lease;", 92), ";")
	_, err := loadEnv(t, policyEnv(t, rules))
	if err == nil {
		t.Fatal("92 rules accepted")
	}
	msg := err.Error()
	if !strings.Contains(msg, "tools.policy: must hold at most 91 items, has 92") || len(msg) > 200 || strings.Contains(msg, "\n") {
		t.Fatalf("error %q (%d bytes), want one short line saying at most 91", msg, len(msg))
	}
	ok := strings.TrimSuffix(strings.Repeat("deny bash prefix:git push;", 91), ";")
	if _, err := loadEnv(t, policyEnv(t, ok)); err != nil {
		t.Fatalf("91 rules: %v", err)
	}
}

func policyEnv(t *testing.T, rules string) map[string]string {
	return map[string]string{"DURABLE_AGENT_HOME": t.TempDir(), "DURABLE_AGENT_TOOLS_POLICY": rules}
}
