// Package app is the worker's composition root: it wires settings into
// the worker with its workflows and activities (NewWorker, NewActivities,
// the providers, the sandbox, the push hub). Every program that runs a
// worker builds it here; clients dial and build prompts with package
// client.
package app

import (
	"cmp"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/internal/checkpoint"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/pgstore"
	"github.com/durableagent/durableagent/internal/procsec"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
)

// NewActivities builds the activities of the settings: the session store
// of session.store (see client.OpenSessionStore), the providers and the
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
	store, err := client.OpenSessionStore(s)
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
		Checkpoints: activities.Checkpoints{DataDir: s.DataDir, Off: !s.Checkpoints.Enabled,
			Limits: checkpoint.Limits{KeepCount: s.Checkpoints.Keep, KeepBytes: s.Checkpoints.MaxBytes}},
		NeedsCredential: func(provider string) bool {
			return provider != "scripted" && !(provider == s.Model.Provider && s.Model.BaseURL != "")
		},
	}, nil
}

// rateWindowsOf is where a worker keeps the rate-limit windows of
// coordinated backoff (SPEC 18.1): with sessions in PostgreSQL, in that
// database, shared by every worker of the cluster; otherwise beside the
// credentials in auth.json, shared by the workers of the data directory.
func rateWindowsOf(store session.Backend, creds *auth.File) activities.RateWindows {
	if pg, ok := store.(*pgstore.Store); ok {
		return pg.Windows()
	}
	return creds
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
		if pw := settings.DSNPassword(u); pw != "" {
			out = append(out, pw)
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
	h, _ := os.Hostname() // "" when it fails
	return cmp.Or(s.Tools.Host, h, "localhost")
}
