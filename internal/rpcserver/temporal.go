package rpcserver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/control"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/rpc"
	"github.com/durableagent/durableagent/workflows"
)

// TemporalBackend is the real Backend: prompts are workflows reached
// through a control.Controller; settings changes are written to the
// settings file; messages are read from the session file.
//
// The RPC process reads <dataDir>/sessions/<session>.jsonl itself, so it
// must share the data dir with the worker that writes it (same machine, or
// a shared filesystem).
type TemporalBackend struct {
	k       *control.Controller
	session string
	store   *session.Store
	// FollowGiveUp is how long Follow survives a failing events query
	// (0: DefaultFollowGiveUp).
	FollowGiveUp time.Duration
	// Reload, when set, re-reads the settings before a prompt starts and
	// before an idle state is built, so a change made by another process
	// (`starter set-auto-retry off`) is seen.
	Reload func() (settings.Settings, error)

	mu sync.Mutex
	s  settings.Settings
}

var _ Backend = (*TemporalBackend)(nil)

// NewTemporalBackend returns the backend of one session.
func NewTemporalBackend(k *control.Controller, s settings.Settings, sessionID string) (*TemporalBackend, error) {
	if err := session.ValidateID(sessionID); err != nil {
		return nil, fmt.Errorf("rpc backend: %w", err)
	}
	store, err := session.Open(filepath.Join(s.DataDir, "sessions"))
	if err != nil {
		return nil, fmt.Errorf("rpc backend: %w", err)
	}
	return &TemporalBackend{k: k, session: sessionID, store: store, s: s}, nil
}

// SessionID implements Backend.
func (t *TemporalBackend) SessionID() string { return t.session }

// settings returns the current settings, reloaded when Reload is set (a
// failed reload keeps the last good ones).
func (t *TemporalBackend) settings() settings.Settings {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.Reload != nil {
		if s, err := t.Reload(); err == nil {
			t.s = s
		}
	}
	return t.s
}

// StartPrompt implements Backend.
func (t *TemporalBackend) StartPrompt(ctx context.Context, message string) (Prompt, error) {
	run, err := t.k.StartPrompt(ctx, app.PromptInput(t.settings(), t.session, message))
	if err != nil {
		return Prompt{}, err
	}
	return Prompt{WorkflowID: run.GetID(), RunID: run.GetRunID()}, nil
}

// Follow implements Backend with the events query, resuming after query
// failures (see DefaultFollowGiveUp).
func (t *TemporalBackend) Follow(ctx context.Context, runID string, after int64, fn func(agent.Event)) (agent.Event, error) {
	giveUp := t.FollowGiveUp
	if giveUp <= 0 {
		giveUp = DefaultFollowGiveUp
	}
	follow := func(ctx context.Context, after int64, fn func(agent.Event)) (agent.Event, error) {
		return t.k.Follow(ctx, t.session, runID, after, fn)
	}
	return followResuming(ctx, follow, after, fn, giveUp, followRetryPause)
}

// Abort implements Backend.
func (t *TemporalBackend) Abort(ctx context.Context) error { return t.k.Abort(ctx, t.session) }

// AbortRetry implements Backend.
func (t *TemporalBackend) AbortRetry(ctx context.Context) error {
	return t.k.AbortRetry(ctx, t.session)
}

// Steer implements Backend.
func (t *TemporalBackend) Steer(ctx context.Context, message string) error {
	return t.k.Steer(ctx, t.session, message)
}

// FollowUp implements Backend.
func (t *TemporalBackend) FollowUp(ctx context.Context, message string) error {
	return t.k.FollowUp(ctx, t.session, message)
}

// ApproveTool implements Backend.
func (t *TemporalBackend) ApproveTool(ctx context.Context, p agent.ApproveToolPayload) error {
	return t.k.ApproveTool(ctx, t.session, p)
}

// SetAutoRetry implements Backend: retry.enabled goes to the settings file
// first (so the next prompt has it), then to the running prompt as the
// set_auto_retry signal (SPEC 8).
func (t *TemporalBackend) SetAutoRetry(ctx context.Context, enabled bool) error {
	t.mu.Lock()
	file := t.s.File()
	err := settings.SetAutoRetry(file, enabled)
	if err == nil {
		t.s.Retry.Enabled = enabled
	}
	t.mu.Unlock()
	if err != nil {
		return err
	}
	if err := t.k.SetAutoRetry(ctx, t.session, enabled); err != nil && !errors.Is(err, control.ErrNoRunningPrompt) {
		return fmt.Errorf("retry.enabled=%t saved in %s, but the running prompt was not told: %w", enabled, file, err)
	}
	return nil
}

// SetAutoCompaction implements Backend: compaction.enabled goes to the
// settings file and applies from the next prompt.
func (t *TemporalBackend) SetAutoCompaction(ctx context.Context, enabled bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := settings.SetAutoCompaction(t.s.File(), enabled); err != nil {
		return err
	}
	t.s.Compaction.Enabled = enabled
	return nil
}

// State implements Backend. A running prompt answers the state query; with
// none running (so also with no worker up) the state comes from the
// settings and the session file.
func (t *TemporalBackend) State(ctx context.Context) (agent.State, error) {
	running, err := t.running(ctx)
	if err != nil {
		return agent.State{}, err
	}
	if running {
		st, err := t.k.State(ctx, t.session)
		if !errors.Is(err, control.ErrNoPrompt) {
			return st, err
		}
	}
	s := t.settings()
	msgs, err := t.Messages(ctx)
	if err != nil {
		return agent.State{}, err
	}
	return agent.State{
		SessionID: t.session, Model: s.Model.Name, Provider: s.Model.Provider, Status: rpc.StatusIdle,
		AutoRetryEnabled: s.Retry.Enabled, AutoCompactionEnabled: s.Compaction.Enabled, MessageCount: len(msgs),
	}, nil
}

// running reports whether the session's workflow is running.
func (t *TemporalBackend) running(ctx context.Context) (bool, error) {
	d, err := t.k.Client.DescribeWorkflowExecution(ctx, workflows.WorkflowID(t.session), "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("describe workflow %s: %w", workflows.WorkflowID(t.session), err)
	}
	return d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
}

// Messages implements Backend: the run context at the end of the session
// file (a session without a file has no messages).
func (t *TemporalBackend) Messages(ctx context.Context) ([]agent.Message, error) {
	sess, err := t.store.Load(t.session)
	if errors.Is(err, session.ErrNotFound) {
		return []agent.Message{}, nil
	}
	if err != nil {
		return nil, err
	}
	return sess.Context(sess.LeafID()), nil
}

// Compact implements Backend: it runs the Compact workflow under the
// session's workflow id (so it cannot race a prompt: a running one makes it
// fail with "session busy") and waits for its result. Abort reaches it like
// a prompt, through the session's workflow id. When ctx ends first the
// compaction keeps running in Temporal.
func (t *TemporalBackend) Compact(ctx context.Context, customInstructions string) (rpc.CompactData, error) {
	in := workflows.CompactInputFrom(app.PromptInput(t.settings(), t.session, ""), customInstructions)
	res, err := t.k.Compact(ctx, in)
	if err != nil {
		return rpc.CompactData{}, err
	}
	return rpc.CompactData{Result: res.Result, NothingToCompact: res.NothingToCompact}, nil
}
