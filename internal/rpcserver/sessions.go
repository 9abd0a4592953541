package rpcserver

import (
	"context"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/rpc"
)

// SessionBackend is what the terminal agent's session, model, thinking
// and bash commands need beyond Backend. TemporalBackend implements it; a
// Backend without it (the terminal UI's test fake) answers those commands
// with "not supported by this backend".
type SessionBackend interface {
	Backend
	// StartPromptWith is StartPrompt with images sent along.
	StartPromptWith(ctx context.Context, message string, images []agent.ContentBlock) (Prompt, error)
	// LoadSession reads a session from the configured store (nil, nil
	// when it has no entries yet). Events are completed from it.
	LoadSession(ctx context.Context, sessionID string) (*session.Session, error)
	// Info is what get_state adds to the workflow's state.
	Info(ctx context.Context) (SessionInfo, error)
	// Models are the models set_model may choose (get_available_models).
	Models() []rpc.Model
	// SetModel chooses the session's model for its next prompts and
	// records a model_change entry; a model that is not available is an
	// error ("Model not found: provider/id").
	SetModel(ctx context.Context, provider, modelID string) (rpc.Model, error)
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
	// (it waits for the command); AbortBash stops the one running.
	Bash(ctx context.Context, command string) (rpc.BashResult, error)
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
	Model         rpc.Model
	ThinkingLevel string
	// SteeringMode and FollowUpMode are the next prompt's queue modes.
	SteeringMode, FollowUpMode string
	// ContextWindow is model.contextWindow.
	ContextWindow int
}
