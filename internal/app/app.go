// Package app wires settings into the product's runtime pieces: the
// Temporal client, the worker with its workflow and activities, and the
// prompt inputs the starter sends. Both mains (worker, starter) and the
// integration tests build on it, so the wiring exists once.
package app

import (
	"os"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/compaction"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

// NewActivities builds the activities of the settings: the session store
// of session.store (see OpenSessionStore), the providers and the
// credentials.
func NewActivities(s settings.Settings) (*activities.Activities, error) {
	store, err := OpenSessionStore(s)
	if err != nil {
		return nil, err
	}
	script := scripted.New(scripted.Options{
		Reply:       s.Scripted.Reply,
		Latency:     time.Duration(s.Scripted.LatencyMs) * time.Millisecond,
		StreamDelay: time.Duration(s.Scripted.StreamDelayMs) * time.Millisecond,
	})
	creds, err := NewCredentials(s)
	if err != nil {
		return nil, err
	}
	return &activities.Activities{
		Sessions:    store,
		Provider:    NewProviders(s, script),
		Credentials: creds,
		// Running calls publish their output so far at the stream
		// interval: heartbeat details, which Temporal keeps as the latest
		// value only, never in history.
		HeartbeatInterval: StreamInterval(s),
		ToolPolicy: activities.ToolPolicy{
			AllowedRoots: s.Tools.AllowedRoots,
			Confine:      s.Tools.Confine,
			EnvAllow:     s.Tools.EnvAllow,
		},
	}, nil
}

// Register puts the Prompt workflow and the activities on w.
func Register(w worker.Registry, acts *activities.Activities) {
	w.RegisterWorkflowWithOptions(workflows.Prompt, workflow.RegisterOptions{Name: workflows.PromptWorkflowName})
	w.RegisterActivityWithOptions(acts.CallModel, activity.RegisterOptions{Name: activities.CallModelName})
	w.RegisterActivityWithOptions(acts.AppendEntries, activity.RegisterOptions{Name: activities.AppendEntriesName})
	w.RegisterActivityWithOptions(acts.LoadSession, activity.RegisterOptions{Name: activities.LoadSessionName})
	w.RegisterActivityWithOptions(acts.MarkUsageLimitReached, activity.RegisterOptions{Name: activities.MarkUsageLimitReachedName})
	w.RegisterWorkflowWithOptions(workflows.Compact, workflow.RegisterOptions{Name: workflows.CompactWorkflowName})
	w.RegisterActivityWithOptions(acts.Summarize, activity.RegisterOptions{Name: activities.SummarizeName})
	w.RegisterActivityWithOptions(acts.RunTool, activity.RegisterOptions{Name: activities.RunToolName})
	w.RegisterActivityWithOptions(acts.BeginPrompt, activity.RegisterOptions{Name: activities.BeginPromptName})
	w.RegisterActivityWithOptions(acts.RecordEntry, activity.RegisterOptions{Name: activities.RecordEntryName})
}

// StreamInterval is stream.intervalMs as a duration.
func StreamInterval(s settings.Settings) time.Duration {
	if s.Stream.IntervalMs <= 0 {
		return activities.MaxHeartbeatInterval
	}
	return time.Duration(s.Stream.IntervalMs) * time.Millisecond
}

// WorkerOptions are the worker options of the settings. Heartbeats leave
// the worker at the stream interval: they carry the live output of running
// calls to clients and cancellations (abort) back to the calls.
func WorkerOptions(s settings.Settings) worker.Options {
	return worker.Options{
		DefaultHeartbeatThrottleInterval: StreamInterval(s),
		MaxHeartbeatThrottleInterval:     StreamInterval(s),
	}
}

// NewWorker returns a worker on the settings' task queue with everything
// registered. The caller starts and stops it.
func NewWorker(c client.Client, s settings.Settings) (worker.Worker, error) {
	acts, err := NewActivities(s)
	if err != nil {
		return nil, err
	}
	w := worker.New(c, s.Temporal.TaskQueue, WorkerOptions(s))
	Register(w, acts)
	return w, nil
}

// PromptInput builds the workflow input of a prompt from the settings.
// A new session's workspace is the current directory (callers may set
// another); an existing session keeps its own.
func PromptInput(s settings.Settings, sessionID, message string) workflows.PromptInput {
	wd, _ := os.Getwd()
	return workflows.PromptInput{
		SessionID: sessionID,
		Message:   message,
		Workspace: wd,
		Model: activities.ModelRef{
			Provider:      s.Model.Provider,
			Name:          s.Model.Name,
			ContextWindow: s.Model.ContextWindow,
			MaxTokens:     s.Model.MaxTokens,
			Faults:        s.Scripted.Faults,
		},
		Retry: s.Retry.Settings,
		Compaction: compaction.Settings{
			Enabled:          s.Compaction.Enabled,
			ReserveTokens:    s.Compaction.ReserveTokens,
			KeepRecentTokens: s.Compaction.KeepRecentTokens,
			AutoContinue:     s.Compaction.AutoContinue,
		},
		ModelTimeoutMs:     int64(s.Model.TimeoutMs),
		HeartbeatTimeoutMs: int64(s.Model.HeartbeatTimeoutMs),
		Tools: activities.ToolsInput{
			Enabled:       s.Tools.Enabled,
			BashTimeoutMs: s.Tools.BashTimeoutMs,
		},
		Agent: workflows.AgentSettings{
			MaxTurns:            s.Agent.MaxTurns,
			ContinueAsNewEvents: s.Agent.ContinueAsNewEvents,
		},
	}
}
