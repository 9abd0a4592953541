package llm

import (
	"fmt"
	"strings"

	"github.com/durableagent/durableagent/agent"
)

// Thinking levels, the terminal agent's names (Request.ThinkingLevel,
// RPC set_thinking_level, model.thinkingLevel). ThinkingOff sends no
// thinking or reasoning option at all.
const (
	ThinkingOff     = "off"
	ThinkingMinimal = "minimal"
	ThinkingLow     = "low"
	ThinkingMedium  = "medium"
	ThinkingHigh    = "high"
	ThinkingXHigh   = "xhigh"
	// ThinkingMax is pi 1.6's "max": the most reasoning each provider
	// takes (AnthropicThinkingBudget, OpenAIReasoningEffort).
	ThinkingMax = "max"
)

// ThinkingLevels lists the levels in the order cycle_thinking_level
// walks them.
var ThinkingLevels = []string{ThinkingOff, ThinkingMinimal, ThinkingLow, ThinkingMedium, ThinkingHigh, ThinkingXHigh, ThinkingMax}

// AnthropicThinkingBudget is the thinking budget (budget_tokens) of a
// level for Anthropic's extended thinking; 0 means thinking off. The
// budgets are the terminal agent's defaults; xhigh, which Anthropic has
// no step for, gets the high budget doubled; max the largest budget that
// leaves the answer its default 8192 tokens (anthropic.DefaultMaxTokens)
// within 64000 output tokens, the largest output limit of Claude's
// current models (a model with a lower limit refuses it: use xhigh).
func AnthropicThinkingBudget(level string) int { return anthropicBudgets[level] }

var anthropicBudgets = map[string]int{
	ThinkingMinimal: 1024,
	ThinkingLow:     2048,
	ThinkingMedium:  8192,
	ThinkingHigh:    16384,
	ThinkingXHigh:   32768,
	ThinkingMax:     64000 - 8192, // 64000 output tokens less the answer's default
}

// OpenAIReasoningEffort is the reasoning_effort of a level for the Chat
// Completions API; "" means none is sent (off). xhigh is sent as is
// (OpenAI's newest reasoning models know it; others answer with an
// error that says so). max is sent as xhigh, the largest effort the API
// takes.
func OpenAIReasoningEffort(level string) string { return openAIEfforts[level] }

var openAIEfforts = map[string]string{
	ThinkingMinimal: ThinkingMinimal, ThinkingLow: ThinkingLow, ThinkingMedium: ThinkingMedium,
	ThinkingHigh: ThinkingHigh, ThinkingXHigh: ThinkingXHigh, ThinkingMax: ThinkingXHigh,
}

// BashExecutionText is how a bash execution (agent.RoleBashExecution)
// reaches a model: the terminal agent's "Ran `cmd`" user message with the
// output in a fence.
func BashExecutionText(m agent.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Ran `%s`\n", m.Command)
	if m.Output != "" {
		fmt.Fprintf(&b, "```\n%s\n```", m.Output)
	} else {
		b.WriteString("(no output)")
	}
	switch {
	case m.Cancelled:
		b.WriteString("\n\n(command cancelled)")
	case m.ExitCode != nil && *m.ExitCode != 0:
		fmt.Fprintf(&b, "\n\nCommand exited with code %d", *m.ExitCode)
	}
	if m.Truncated && m.FullOutputPath != "" {
		fmt.Fprintf(&b, "\n\n[Output truncated. Full output: %s]", m.FullOutputPath)
	}
	return b.String()
}
