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
	"github.com/durableagent/durableagent/internal/settings"
)

// Prompt identifies a started prompt.
type Prompt struct {
	WorkflowID string
	RunID      string
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

// BashOptions are the options of Session.Bash.
type BashOptions struct {
	// ExcludeFromContext records the command without sending its output
	// to the model (pi's `!!`; RPC bash excludeFromContext).
	ExcludeFromContext bool
	// OnOutput, when set, receives the output the command prints while it
	// runs, as it is read (live output: not every byte of a fast flood),
	// before Bash returns.
	OnOutput func(delta string)
}
