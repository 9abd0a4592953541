package agent

import "cmp"

// Settings are the settings of the tool loop: the settings group agent
// (internal/settings) and the loop's part of a prompt's input
// (workflows.PromptInput.Agent), one shape for both.
type Settings struct {
	// MaxTurns stops a prompt whose model still asks for tools after this
	// many turns (0: no limit).
	MaxTurns int `json:"maxTurns"`
	// ContinueAsNewEvents is the history length at which a prompt
	// continues as new at the next turn boundary (0: the workflow's
	// default). Temporal's own suggestion is honoured too.
	ContinueAsNewEvents int `json:"continueAsNewEvents"`
	// SteeringMode is how many queued steer messages one delivery takes:
	// QueueModeOneAtATime ("": the default) or QueueModeAll.
	SteeringMode string `json:"steeringMode"`
	// FollowUpMode is the same for follow_up messages.
	FollowUpMode string `json:"followUpMode"`
	// SystemPrompt and AppendSystemPrompt are the user's additions to the
	// session's system prompt (agent.systemPrompt replaces its preamble,
	// agent.appendSystemPrompt is added at its end); the session's first
	// prompt builds it, later prompts' values are not used.
	SystemPrompt       string `json:"systemPrompt"`
	AppendSystemPrompt string `json:"appendSystemPrompt"`
	// SubAgents bounds the prompt's sub-agents (the task tool).
	SubAgents SubAgentLimits `json:"subagents"`
}

// SubAgentLimits are the settings group agent.subagents: how many
// sub-agents (task calls) a prompt runs at once, how deep they nest, how
// many in all; zero values are the defaults.
type SubAgentLimits struct {
	// MaxConcurrent sub-agents of a prompt run at once; the further task
	// calls of an answer wait for a place.
	MaxConcurrent int `json:"maxConcurrent"`
	// MaxDepth bounds the nesting: a prompt at this depth starts none.
	MaxDepth int `json:"maxDepth"`
	// MaxTotal sub-agents one prompt starts in all.
	MaxTotal int `json:"maxTotal"`
}

// DefaultSubAgentLimits are agent.subagents' defaults.
var DefaultSubAgentLimits = SubAgentLimits{MaxConcurrent: 4, MaxDepth: 2, MaxTotal: 16}

// Limits are l with the defaults filled in where a limit is 0 (a
// negative one is refused by PromptInput.Validate).
func (l SubAgentLimits) Limits() SubAgentLimits {
	d := DefaultSubAgentLimits
	return SubAgentLimits{MaxConcurrent: cmp.Or(l.MaxConcurrent, d.MaxConcurrent),
		MaxDepth: cmp.Or(l.MaxDepth, d.MaxDepth), MaxTotal: cmp.Or(l.MaxTotal, d.MaxTotal)}
}

// Tools are the tool settings a prompt carries (tools.enabled,
// tools.bashTimeoutMs, tools.hostWaitMs), one shape in the settings group
// tools, a prompt's input and a tool call's. Where a tool may act is the
// worker's policy (activities.ToolPolicy), not the prompt's.
type Tools struct {
	// Enabled names the tools offered to the model (nil: none, a chat).
	Enabled []string `json:"enabled"`
	// BashTimeoutMs bounds a bash call that names no timeout (0: none).
	BashTimeoutMs int64 `json:"bashTimeoutMs"`
	// HostWaitMs is how long a tool call of a host-placed session waits
	// for its host before the prompt reports that it waits (it keeps
	// waiting); 0: the workflow's default.
	HostWaitMs int64 `json:"hostWaitMs"`
}
