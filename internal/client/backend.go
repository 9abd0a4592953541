// Package client is the one client of the product: it dials Temporal,
// starts, signals, queries and follows a session's prompts (Controller:
// start options, queries, the shared follower of live output) and serves
// the session commands (switching, forking, model and thinking choices,
// queue modes, user commands, manual compaction), in the product's types
// (agent, session, settings, workflows). The CLI, the RPC server (package
// rpcserver, the protocol only) and the terminal UI (package tui) sit on
// it.
//
// Contract: a session entry written from outside a prompt (set_model,
// set_thinking_level, set_session_name) goes through the SessionWrite
// workflow under the session's workflow id, never check-then-act: it
// lands whole before or after another client's prompt, never inside it.
package client

import (
	"context"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

// Backend is what RPC mode and the terminal UI need from one session: start
// and follow its prompts, signal the running one, read its state and
// messages, and change its persisted settings. Every method is safe for
// concurrent use.
type Backend interface {
	// SessionID is the session this backend serves.
	SessionID() string
	// StartPrompt starts a prompt and returns once its workflow runs. A
	// session runs one prompt at a time: when one runs, the error wraps
	// ErrSessionBusy.
	StartPrompt(ctx context.Context, message string) (Prompt, error)
	// Follow calls fn with every event of the prompt runID ("": the
	// session's latest prompt) after seq `after`, in order and once each,
	// until prompt_end (returned) or ctx ends (ctx.Err()).
	Follow(ctx context.Context, runID string, after int64, fn func(agent.Event)) (agent.Event, error)
	// Abort sends abort to the running prompt; AbortRetry sends abort_retry.
	// Without a running prompt both fail with ErrNoRunningPrompt.
	Abort(ctx context.Context) error
	AbortRetry(ctx context.Context) error
	// SetAutoRetry persists retry.enabled and tells the running prompt, if
	// any.
	SetAutoRetry(ctx context.Context, enabled bool) error
	// SetAutoCompaction persists compaction.enabled (used by the next
	// prompt).
	SetAutoCompaction(ctx context.Context, enabled bool) error
	// State is the running prompt's state, or, with no prompt running, the
	// session's state from the settings and the session file (Status
	// StatusIdle).
	State(ctx context.Context) (agent.State, error)
	// Messages is the session's run context as stored in the session file.
	Messages(ctx context.Context) ([]agent.Message, error)
	// Compact compacts the session's context now (manual compaction) and
	// returns when it is done; while a prompt runs it fails with
	// ErrSessionBusy. A compaction that fails or is aborted is an
	// error. While it waits, the summary call's auto_retry_start and
	// auto_retry_end events go to onRetry (abort_retry reaches the retry
	// as a prompt's).
	Compact(ctx context.Context, customInstructions string, onRetry func(agent.Event)) (workflows.CompactResult, error)
	// Steer queues message for the running prompt (signal steer): it is
	// delivered after the current tool batch, whose calls not started yet
	// are skipped. FollowUp queues it for when the prompt would otherwise
	// end (signal follow_up). Without a running prompt both fail with
	// ErrNoRunningPrompt.
	Steer(ctx context.Context, message string, images ...agent.ContentBlock) error
	FollowUp(ctx context.Context, message string, images ...agent.ContentBlock) error
	// Queue lists the running prompt's queued messages in delivery
	// order; EditQueue edits, removes or clears them (update edit_queue;
	// a message already delivered is an error saying so).
	Queue(ctx context.Context) ([]agent.QueuedMessage, error)
	EditQueue(ctx context.Context, p agent.EditQueuePayload) (agent.EditQueueResult, error)
	// ApproveTool decides a tool call waiting for approval (update
	// approve_tool); an unknown or already decided id is an error.
	ApproveTool(ctx context.Context, p agent.ApproveToolPayload) error
}

// StatusIdle is State's Status when the session runs no prompt.
const StatusIdle = "idle"

// Prompt identifies a started prompt.
type Prompt struct {
	WorkflowID string
	RunID      string
}

// PromptWatcher is a backend that tells which prompt its session ran
// last, whoever started it (Session does). A chat polls it while idle, so
// it follows its session, not only the prompts it started.
type PromptWatcher interface {
	// LatestPrompt returns the session's latest prompt, running or
	// closed (ok false when the session's workflow has no run yet, or
	// its latest run is a compaction or a user command).
	LatestPrompt(ctx context.Context) (p PromptRun, ok bool, err error)
}

// PromptRun is a prompt's current run.
type PromptRun struct {
	// Prompt is the current run (follow it).
	Prompt
	// FirstRunID names the prompt across its runs (continue-as-new): the
	// run id StartPrompt returned.
	FirstRunID string
	Running    bool
}

// SessionBackend is what the terminal agent's session, model, thinking
// and bash commands need beyond Backend. Session implements it; the RPC
// server answers them "not supported by this backend" for a Backend
// without it.
type SessionBackend interface {
	Backend
	// StartPromptWith is StartPrompt with images sent along.
	StartPromptWith(ctx context.Context, message string, images []agent.ContentBlock) (Prompt, error)
	// LoadSession reads a session from the configured store (nil, nil
	// when it has no entries yet). Events are completed from it.
	LoadSession(ctx context.Context, sessionID string) (*session.Session, error)
	// Info is what get_state adds to the workflow's state.
	Info(ctx context.Context) (SessionInfo, error)
	// Settings are the settings in force (reloaded when the Session's
	// Reload is set).
	Settings() settings.Settings
	// Models are the models set_model may choose (get_available_models).
	Models() []settings.ModelID
	// SetModel chooses the session's model for its next prompts and
	// records a model_change entry; a model that is not available is an
	// error ("Model not found: provider/id").
	SetModel(ctx context.Context, provider, modelID string) error
	// SetThinkingLevel chooses the thinking level of the next prompts and
	// records a thinking_level_change entry.
	SetThinkingLevel(ctx context.Context, level string) error
	// SetQueueMode sets the steering (steer true) or follow-up mode of
	// the next prompts.
	SetQueueMode(ctx context.Context, steer bool, mode string) error
	// SetSessionName records a session_info entry.
	SetSessionName(ctx context.Context, name string) error
	// NewSession switches to a new, empty session.
	NewSession(ctx context.Context) error
	// SwitchSession switches to an existing session, named by its id or
	// its file.
	SwitchSession(ctx context.Context, ref string) error
	// Fork switches to a new session holding the current one's branch up
	// to entryID: before it (a user message, whose text it returns) or,
	// with at, including it (clone).
	Fork(ctx context.Context, entryID string, at bool) (string, error)
	// Bash runs a user command in the session's workspace and records it
	// (it waits for the command) and returns its bashExecution message;
	// AbortBash stops the one running.
	Bash(ctx context.Context, command string, opts BashOptions) (agent.Message, error)
	AbortBash(ctx context.Context) error
}

// SessionInfo describes the session a backend serves, beyond the
// workflow's state.
type SessionInfo struct {
	SessionID string
	// File is the session file ("" when sessions live in PostgreSQL).
	File string
	// Name is the display name (session_info).
	Name string
	// Model and ThinkingLevel are what the next prompt uses.
	Model         settings.ModelID
	ThinkingLevel string
	// SteeringMode and FollowUpMode are the next prompt's queue modes.
	SteeringMode, FollowUpMode string
	// ContextWindow is model.contextWindow.
	ContextWindow int
}

// BashOptions are the options of SessionBackend.Bash.
type BashOptions struct {
	// ExcludeFromContext records the command without sending its output
	// to the model (pi's `!!`; RPC bash excludeFromContext).
	ExcludeFromContext bool
	// OnOutput, when set, receives the output the command prints while it
	// runs, as it is read (live output: not every byte of a fast flood),
	// before Bash returns.
	OnOutput func(delta string)
}
