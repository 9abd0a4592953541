package settings

import "fmt"

// MaxSystemPromptSetting bounds agent.systemPrompt and
// agent.appendSystemPrompt: they travel in each prompt's workflow input,
// which Temporal history keeps.
const MaxSystemPromptSetting = 16 << 10

// checkSystemPromptText keeps a system prompt setting within
// MaxSystemPromptSetting bytes.
func checkSystemPromptText(v string) string {
	if len(v) > MaxSystemPromptSetting {
		return fmt.Sprintf("is %d bytes, at most %d allowed (put long project rules in AGENTS.md instead)", len(v), MaxSystemPromptSetting)
	}
	return ""
}
