// Package app wires settings into the product's runtime pieces: the
// Temporal client, the worker with its workflow and activities, and the
// prompt inputs the starter sends. Both mains (worker, starter) and the
// integration tests build on it, so the wiring exists once.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/compaction"
	"github.com/durableagent/durableagent/internal/codec"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

// DialTimeout bounds how long Dial waits for Temporal to answer.
const DialTimeout = 5 * time.Second

// ErrUnreachable wraps a failure to reach the Temporal frontend.
var ErrUnreachable = errors.New("cannot reach Temporal")

// Dial connects to the Temporal server of the settings, failing fast with
// a one-line error naming the address.
func Dial(ctx context.Context, s settings.Settings, logger *slog.Logger) (client.Client, error) {
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	// With a codec key configured, every payload is encrypted before it
	// reaches Temporal (worker and starter alike, as both dial here).
	var dc converter.DataConverter
	if cdc, err := codec.FromSettings(s); err != nil {
		return nil, err
	} else if cdc != nil {
		dc = codec.DataConverter(nil, cdc)
	}
	ctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	c, err := client.DialContext(ctx, client.Options{
		HostPort:      s.Temporal.Address,
		Namespace:     s.Temporal.Namespace,
		Logger:        sdklog.NewStructuredLogger(logger),
		DataConverter: dc,
	})
	if err != nil {
		return nil, fmt.Errorf("%w at %s (namespace %q): %v", ErrUnreachable, s.Temporal.Address, s.Temporal.Namespace, err)
	}
	return c, nil
}

// NewActivities builds the activities of the settings: the session store
// under the data directory, the providers and the credentials.
func NewActivities(s settings.Settings) (*activities.Activities, error) {
	store, err := session.Open(filepath.Join(s.DataDir, "sessions"))
	if err != nil {
		return nil, fmt.Errorf("open session store: %w", err)
	}
	script := scripted.New(scripted.Options{
		Reply:   s.Scripted.Reply,
		Latency: time.Duration(s.Scripted.LatencyMs) * time.Millisecond,
	})
	creds, err := NewCredentials(s)
	if err != nil {
		return nil, err
	}
	return &activities.Activities{
		Sessions:    store,
		Provider:    NewProviders(s, script),
		Credentials: creds,
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
}

// NewWorker returns a worker on the settings' task queue with everything
// registered. The caller starts and stops it.
func NewWorker(c client.Client, s settings.Settings) (worker.Worker, error) {
	acts, err := NewActivities(s)
	if err != nil {
		return nil, err
	}
	w := worker.New(c, s.Temporal.TaskQueue, worker.Options{
		// Heartbeats carry cancellations to running model calls: send them
		// at the ticker's pace so abort lands within about a second.
		DefaultHeartbeatThrottleInterval: activities.MaxHeartbeatInterval,
		MaxHeartbeatThrottleInterval:     activities.MaxHeartbeatInterval,
	})
	Register(w, acts)
	return w, nil
}

// PromptInput builds the workflow input of a prompt from the settings.
func PromptInput(s settings.Settings, sessionID, message string) workflows.PromptInput {
	return workflows.PromptInput{
		SessionID: sessionID,
		Message:   message,
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
	}
}
