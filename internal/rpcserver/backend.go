package rpcserver

import (
	"context"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/rpc"
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
	// control.ErrSessionBusy.
	StartPrompt(ctx context.Context, message string) (Prompt, error)
	// Follow calls fn with every event of the prompt runID ("": the
	// session's latest prompt) after seq `after`, in order and once each,
	// until prompt_end (returned) or ctx ends (ctx.Err()).
	Follow(ctx context.Context, runID string, after int64, fn func(agent.Event)) (agent.Event, error)
	// Abort sends abort to the running prompt; AbortRetry sends abort_retry.
	// Without a running prompt both fail with control.ErrNoRunningPrompt.
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
	// rpc.StatusIdle).
	State(ctx context.Context) (agent.State, error)
	// Messages is the session's run context as stored in the session file.
	Messages(ctx context.Context) ([]agent.Message, error)
	// Compact compacts the session's context now (manual compaction) and
	// returns when it is done; while a prompt runs it fails with
	// control.ErrSessionBusy. A compaction that fails or is aborted is an
	// error. While it waits, the summary call's auto_retry_start and
	// auto_retry_end events go to onRetry (abort_retry reaches the retry
	// as a prompt's).
	Compact(ctx context.Context, customInstructions string, onRetry func(agent.Event)) (rpc.CompactData, error)
	// Steer queues message for the running prompt (signal steer): it is
	// delivered after the current tool batch, whose calls not started yet
	// are skipped. FollowUp queues it for when the prompt would otherwise
	// end (signal follow_up). Without a running prompt both fail with
	// control.ErrNoRunningPrompt.
	Steer(ctx context.Context, message string) error
	FollowUp(ctx context.Context, message string) error
	// ApproveTool decides a tool call waiting for approval (update
	// approve_tool); an unknown or already decided id is an error.
	ApproveTool(ctx context.Context, p agent.ApproveToolPayload) error
}

// Prompt identifies a started prompt.
type Prompt struct {
	WorkflowID string
	RunID      string
}
