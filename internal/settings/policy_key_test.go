package settings

import (
	"strings"
	"testing"
)

// Issue 22: tools.policy takes rules from the settings file (a YAML list)
// and the environment (";"-separated), and refuses a bad rule in one line
// that names the key, the rule and the problem.
func TestPolicyKey(t *testing.T) {
	home := t.TempDir()
	file := writeYAML(t, "tools:\n  policy:\n    - deny bash prefix:git push\n    - 'ask write path:/etc/**'\n")
	t.Setenv("DURABLE_AGENT_HOME", home)
	s, err := Load(LoadOptions{File: file})
	if err != nil || strings.Join(s.Tools.Policy, "|") != "deny bash prefix:git push|ask write path:/etc/**" {
		t.Fatalf("file: %q, %v", s.Tools.Policy, err)
	}
	if d := Defaults(); len(d.Tools.Policy) != 0 {
		t.Fatalf("default tools.policy %q, want none (the built-in default follows any rules)", d.Tools.Policy)
	}
	for name, tc := range map[string]struct{ value, want string }{
		"bad action": {"allow read;permit bash", `tools.policy[1]: "permit bash": action "permit" is not allow, ask or deny`},
		"bad regex":  {"deny bash regex:(", `tools.policy[0]: "deny bash regex:(": bad regex`},
		"path bash":  {"allow bash path:**", "bash has none"},
	} {
		_, err := loadEnv(t, map[string]string{"DURABLE_AGENT_HOME": t.TempDir(), "DURABLE_AGENT_TOOLS_POLICY": tc.value})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line with %q", name, err, tc.want)
		}
	}
}
