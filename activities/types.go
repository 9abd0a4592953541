package activities

import (
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
)

// ModelRef names the model of a prompt. It never carries a secret.
type ModelRef struct {
	Provider      string `json:"provider"`
	Name          string `json:"name"`
	ContextWindow int    `json:"contextWindow,omitempty"`
	MaxTokens     int    `json:"maxTokens,omitempty"`
	// Faults is the scripted provider's fault script (see
	// internal/llm/scripted); ignored by real providers.
	Faults []string `json:"faults,omitempty"`
	// SummaryFaults is the scripted provider's fault script for compaction
	// summary calls (indexed by the summarisation attempt); ignored by real
	// providers.
	SummaryFaults []string `json:"summaryFaults,omitempty"`
}

// CallModelInput is the input of CallModel. The run context is the branch
// of the session file that ends at LeafID: dropping a failed message from
// the run context is just not advancing the leaf.
type CallModelInput struct {
	SessionID string   `json:"sessionId"`
	LeafID    string   `json:"leafId"`
	EntryID   string   `json:"entryId"`
	Model     ModelRef `json:"model"`
}

// CallModelResult is what the workflow needs of the assistant message; the
// whole message is in the session file under EntryID.
type CallModelResult struct {
	EntryID      string           `json:"entryId"`
	StopReason   agent.StopReason `json:"stopReason"`
	ErrorMessage string           `json:"errorMessage,omitempty"`
	ErrorStatus  int              `json:"errorStatus,omitempty"`
	ErrorType    string           `json:"errorType,omitempty"`
	ShouldRetry  *bool            `json:"shouldRetry,omitempty"`
	Usage        *agent.Usage     `json:"usage,omitempty"`
	Text         string           `json:"text,omitempty"`
	// CredentialID is the id (never the secret) of the credential used.
	CredentialID string `json:"credentialId,omitempty"`
}

// AppendEntriesInput is the input of AppendEntries.
type AppendEntriesInput struct {
	SessionID string          `json:"sessionId"`
	Entries   []session.Entry `json:"entries"`
}

// AppendEntriesResult reports how many entries were new.
type AppendEntriesResult struct {
	Written int `json:"written"`
}

// LoadSessionInput is the input of LoadSession.
type LoadSessionInput struct {
	SessionID string `json:"sessionId"`
}

// LoadSessionResult describes the session's current run context.
type LoadSessionResult struct {
	Exists        bool   `json:"exists"`
	LeafID        string `json:"leafId,omitempty"`
	MessageCount  int    `json:"messageCount"`
	ContextTokens int    `json:"contextTokens"`
}

// MarkUsageLimitInput is the input of MarkUsageLimitReached.
type MarkUsageLimitInput struct {
	Provider     string `json:"provider"`
	Model        string `json:"model"`
	SessionID    string `json:"sessionId"`
	RetryAfterMs int64  `json:"retryAfterMs"`
}

// MarkUsageLimitResult says whether the auth store switched the session to
// another credential (or model); the retry then waits 0 ms.
type MarkUsageLimitResult struct {
	Switched     bool   `json:"switched"`
	CredentialID string `json:"credentialId,omitempty"`
	// Model is set when the switch was to a fallback model.
	Model string `json:"model,omitempty"`
}

// SummarizeInput is the input of Summarize. It names the branch to compact
// by its leaf; the activity reads the messages from the session file.
type SummarizeInput struct {
	SessionID string `json:"sessionId"`
	// LeafID ends the run context to compact; the compaction entry is
	// written as its child.
	LeafID string `json:"leafId"`
	// EntryID is the id of the compaction entry to write (chosen by the
	// workflow, so a re-run writes nothing twice).
	EntryID string   `json:"entryId"`
	Model   ModelRef `json:"model"`
	// KeepRecentTokens is compaction.keepRecentTokens.
	KeepRecentTokens int `json:"keepRecentTokens"`
	// CustomInstructions are the user's wishes for this summary.
	CustomInstructions string `json:"customInstructions,omitempty"`
	// Attempt counts the summarisation attempts already made for this
	// compaction (0 for the first); it indexes Model.SummaryFaults.
	Attempt int `json:"attempt"`
}

// SummarizeResult is a compaction's outcome. A model failure is data
// (StopReason "error" with the error fields), never an activity failure;
// nothing is written then.
type SummarizeResult struct {
	// EntryID is the compaction entry written ("" when nothing was).
	EntryID string `json:"entryId,omitempty"`
	// Summary replaces every message before FirstKeptEntryID. It is
	// bounded by the model's answer size.
	Summary          string `json:"summary,omitempty"`
	FirstKeptEntryID string `json:"firstKeptEntryId,omitempty"`
	// TokensBefore is the size of the run context before the compaction.
	TokensBefore int `json:"tokensBefore"`
	// MessageCount is the number of messages of the rebuilt run context
	// (the summary plus the kept messages).
	MessageCount int `json:"messageCount"`
	// NothingToCompact: the kept tail is the whole context; no model call
	// was made and no entry written.
	NothingToCompact bool `json:"nothingToCompact,omitempty"`
	// StopReason is "stop" on success, "error" when the summary call
	// failed (ErrorMessage and the structured fields say why).
	StopReason   agent.StopReason `json:"stopReason,omitempty"`
	ErrorMessage string           `json:"errorMessage,omitempty"`
	ErrorStatus  int              `json:"errorStatus,omitempty"`
	ErrorType    string           `json:"errorType,omitempty"`
	ShouldRetry  *bool            `json:"shouldRetry,omitempty"`
}
