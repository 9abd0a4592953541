package settings

import (
	"strings"
	"testing"
)

// Issue 23: agent.systemPrompt and agent.appendSystemPrompt are empty by
// default, load from the environment, and a value past the bound is
// refused in one line naming the key.
func TestSystemPromptKeys(t *testing.T) {
	if d := Defaults(); d.Agent.SystemPrompt != "" || d.Agent.AppendSystemPrompt != "" {
		t.Fatalf("defaults: %+v", d.Agent)
	}
	load := func(env map[string]string) (Settings, error) {
		env["DURABLE_AGENT_HOME"] = t.TempDir()
		return loadEnv(t, env)
	}
	s, err := load(map[string]string{
		"DURABLE_AGENT_AGENT_SYSTEMPROMPT":       "You are a release engineer.",
		"DURABLE_AGENT_AGENT_APPENDSYSTEMPROMPT": "Answer in French.",
	})
	if err != nil || s.Agent.SystemPrompt != "You are a release engineer." || s.Agent.AppendSystemPrompt != "Answer in French." {
		t.Fatalf("load: %+v, %v", s.Agent, err)
	}
	for _, key := range []string{"agent.systemPrompt", "agent.appendSystemPrompt"} {
		env := "DURABLE_AGENT_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
		_, err := load(map[string]string{env: strings.Repeat("x", MaxSystemPromptSetting+1)})
		want := key + ": is 16385 bytes, at most 16384 allowed"
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s too long: error %v, want one line with %q", key, err, want)
		}
	}
}
