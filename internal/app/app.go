// Package app wires settings into the product's runtime pieces: the
// Temporal client, the worker with its workflow and activities, and the
// prompt inputs the starter sends. Both mains (worker, starter) and the
// integration tests build on it, so the wiring exists once.
package app

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/policy"
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
	var windows activities.RateWindows
	if s.Model.CoordinatedBackoff {
		windows = rateWindowsOf(store, creds)
	}
	return &activities.Activities{
		Sessions:    store,
		Provider:    NewProviders(s, script),
		Credentials: creds,
		Windows:     windows,
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
		Secrets:     SettingsSecrets(s),
		ToolHost:    ToolHost(s),
		WorktreeDir: worktreeDir(s),
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
		Compaction:         s.Compaction.Settings,
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
