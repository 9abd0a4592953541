package client

import (
	"os"
	"slices"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/policy"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

// ModelCost is the price of a model from model.prices (nil when it has
// none: its usage costs 0).
func ModelCost(s settings.Settings, provider, name string) *agent.ModelCost {
	if c, ok := s.Model.Price(settings.ModelID{Provider: provider, Name: name}); ok {
		return &c
	}
	return nil
}

// PromptInput builds the workflow input of a prompt from the settings.
// A new session's workspace is the current directory (callers may set
// another); an existing session keeps its own.
func PromptInput(s settings.Settings, sessionID, message string) workflows.PromptInput {
	wd, _ := os.Getwd()
	in := workflows.PromptInput{
		SessionID: sessionID,
		Message:   message,
		// The programs that call this send a person's prompt; a schedule's
		// run (ScheduledPrompt) and a delegated task set their own.
		Origin:    workflows.OriginInteractive,
		Workspace: wd,
		Model: activities.ModelRef{
			Provider:      s.Model.Provider,
			Name:          s.Model.Name,
			ContextWindow: s.Model.ContextWindow,
			MaxTokens:     s.Model.MaxTokens,
			Faults:        s.Scripted.Faults,
			ThinkingLevel: s.Model.ThinkingLevel,
			Cost:          ModelCost(s, s.Model.Provider, s.Model.Name),
		},
		Retry:              s.Retry.Settings,
		Compaction:         s.Compaction,
		ModelTimeoutMs:     int64(s.Model.TimeoutMs),
		HeartbeatTimeoutMs: int64(s.Model.HeartbeatTimeoutMs),
		Tools:              s.Tools.Tools,
		Agent:              s.Agent,
		Approval: workflows.ToolApproval{Approval: agent.Approval{RequireApproval: s.Tools.RequireApproval,
			ApprovalTimeoutMs: s.Tools.ApprovalTimeoutMs, Policy: append(slices.Clip(s.Tools.Policy), policy.Default...)}},
		Budget: s.Budget.Limits(),
	}
	if s.Session.Worktree {
		in.Worktree = activities.WorktreeNew
	}
	return in
}
