// Package app wires settings into the product's runtime pieces: the
// Temporal client, the worker with its workflow and activities, and the
// prompt inputs the starter sends. Both mains (worker, starter) and the
// integration tests build on it, so the wiring exists once.
package app

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/procsec"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

// NewActivities builds the activities of the settings: the session store
// of session.store (see OpenSessionStore), the providers and the
// credentials.
//
// Every worker process builds its activities here (worker, worker --dev,
// the demo, worker-cluster, the benchmark's child), so this is where the
// process is made non-dumpable: other processes of the worker's user can
// then not read its environment (the provider keys) or its memory
// through /proc (procsec).
func NewActivities(s settings.Settings) (*activities.Activities, error) {
	if err := procsec.DisableDumps(); err != nil {
		return nil, fmt.Errorf("harden the worker process: %w", err)
	}
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
		// Running calls publish their output so far as heartbeat
		// details, which Temporal keeps as the latest value only, never in
		// history: a model call records its snapshot as soon as it changes
		// (WorkerOptions' throttle sends one heartbeat per stream interval,
		// carrying the latest), every call at least every interval.
		HeartbeatInterval: StreamInterval(s),
		ToolPolicy: activities.ToolPolicy{
			AllowedRoots: s.Tools.AllowedRoots,
			Confine:      s.Tools.Confine,
			EnvAllow:     s.Tools.EnvAllow,
			// The worker's approval floor, joined to each prompt's list.
			RequireApproval: s.Tools.WorkerRequireApproval,
		},
		Secrets:  SettingsSecrets(s),
		ToolHost: ToolHost(s),
		NeedsCredential: func(provider string) bool {
			return provider != "scripted" && !(provider == s.Model.Provider && s.Model.BaseURL != "")
		},
	}, nil
}

// SettingsSecrets are the secret values of the settings that tool output
// is redacted of: the text of codec.keyFile (the codec key) and the
// session database URL with its password. The environment's and the
// credential store's are read by the activities at each call.
func SettingsSecrets(s settings.Settings) []string {
	var out []string
	if s.Codec.KeyFile != "" {
		if b, err := os.ReadFile(s.Codec.KeyFile); err == nil {
			out = append(out, string(b), strings.TrimSpace(string(b)))
		}
	}
	if u := s.Session.PostgresURL; u != "" && settings.RedactURL(u) != u {
		out = append(out, u)
		if pu, err := url.Parse(u); err == nil {
			if pw, ok := pu.User.Password(); ok {
				out = append(out, pw)
			}
		}
	}
	return out
}

// ToolHost is the worker's host for tool placement: tools.host, or the
// machine's host name; "" when tools.placement is any.
func ToolHost(s settings.Settings) string {
	if s.Tools.Placement == settings.ToolPlacementAny {
		return ""
	}
	if s.Tools.Host != "" {
		return s.Tools.Host
	}
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	return h
}

// NewToolWorker returns the worker that runs the tool calls of the
// sessions this host holds (tools.placement host): RunTool on
// activities.ToolQueue(taskQueue, host). It is nil when placement is any.
// Every worker process of a host-placed deployment runs it beside its
// main worker.
func NewToolWorker(c client.Client, s settings.Settings, acts *activities.Activities) worker.Worker {
	if acts.ToolHost == "" {
		return nil
	}
	w := worker.New(c, activities.ToolQueue(s.Temporal.TaskQueue, acts.ToolHost), WorkerOptions(s))
	w.RegisterActivityWithOptions(acts.RunTool, activity.RegisterOptions{Name: activities.RunToolName})
	w.RegisterActivityWithOptions(acts.UserBash, activity.RegisterOptions{Name: activities.UserBashName})
	w.RegisterActivityWithOptions(acts.DeleteSession, activity.RegisterOptions{Name: activities.DeleteSessionName})
	return w
}

// pair is a main worker and the tool worker of its host, started and
// stopped together.
type pair struct {
	worker.Worker
	tools worker.Worker
}

func (p pair) Start() error {
	if err := p.tools.Start(); err != nil {
		return err
	}
	if err := p.Worker.Start(); err != nil {
		p.tools.Stop()
		return err
	}
	return nil
}

func (p pair) Run(interruptCh <-chan interface{}) error {
	if err := p.Start(); err != nil {
		return err
	}
	<-interruptCh
	p.Stop()
	return nil
}

func (p pair) Stop() {
	p.Worker.Stop()
	p.tools.Stop()
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
	w.RegisterWorkflowWithOptions(workflows.Bash, workflow.RegisterOptions{Name: workflows.BashWorkflowName})
	w.RegisterActivityWithOptions(acts.UserBash, activity.RegisterOptions{Name: activities.UserBashName})
	w.RegisterWorkflowWithOptions(workflows.DeleteSession, workflow.RegisterOptions{Name: workflows.DeleteSessionWorkflowName})
	w.RegisterWorkflowWithOptions(workflows.SessionWrite, workflow.RegisterOptions{Name: workflows.SessionWriteWorkflowName})
	w.RegisterActivityWithOptions(acts.DeleteSession, activity.RegisterOptions{Name: activities.DeleteSessionName})
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
	if tw := NewToolWorker(c, s, acts); tw != nil {
		return pair{Worker: w, tools: tw}, nil
	}
	return w, nil
}

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
			ThinkingLevel: s.Model.ThinkingLevel,
			Cost:          ModelCost(s, s.Model.Provider, s.Model.Name),
		},
		Retry:              s.Retry.Settings,
		Compaction:         s.Compaction.Settings,
		ModelTimeoutMs:     int64(s.Model.TimeoutMs),
		HeartbeatTimeoutMs: int64(s.Model.HeartbeatTimeoutMs),
		Tools: activities.ToolsInput{
			Enabled:       s.Tools.Enabled,
			BashTimeoutMs: s.Tools.BashTimeoutMs,
			HostWaitMs:    s.Tools.HostWaitMs,
		},
		Agent: workflows.AgentSettings{
			MaxTurns:            s.Agent.MaxTurns,
			ContinueAsNewEvents: s.Agent.ContinueAsNewEvents,
			SteeringMode:        s.Agent.SteeringMode,
			FollowUpMode:        s.Agent.FollowUpMode,
		},
		Approval: workflows.ToolApproval{
			Require:   s.Tools.RequireApproval,
			TimeoutMs: s.Tools.ApprovalTimeoutMs,
		},
	}
}
