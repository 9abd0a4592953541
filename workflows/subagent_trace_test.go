package workflows

import "github.com/durableagent/durableagent/internal/tracing"

// The worker's tracing interceptor finds the task call in a SubAgent
// workflow's input.
var _ tracing.TaskCall = SubAgentInput{}

// ... and in a sub-agent's prompt's.
var _ tracing.SubAgentPrompt = PromptInput{}
