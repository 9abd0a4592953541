package workflows

import "github.com/durableagent/durableagent/internal/tracing"

// The worker's tracing interceptor finds the task call in a sub-agent's
// prompt's input.
var _ tracing.SubAgentPrompt = PromptInput{}
