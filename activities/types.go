package activities

import (
	"encoding/json"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/internal/policy"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/retry"
)

// ModelRef names the model of a prompt. It never carries a secret.
type ModelRef struct {
	Provider      string `json:"provider"`
	Name          string `json:"name"`
	ContextWindow int    `json:"contextWindow,omitempty"`
	MaxTokens     int    `json:"maxTokens,omitempty"`
	// Faults is the scripted provider's fault script (see
	// internal/llm/scripted); ignored by real providers. A prompt hands
	// its scripts to BeginPrompt, which keeps them beside the session, and
	// its model calls name them (FaultsAt) rather than carry them.
	Faults []string `json:"faults,omitempty"`
	// SummaryFaults is the scripted provider's fault script for compaction
	// summary calls (indexed by the summarisation attempt); ignored by real
	// providers.
	SummaryFaults []string `json:"summaryFaults,omitempty"`
	// ThinkingLevel is the reasoning asked of the model (llm.ThinkingLevels;
	// "" is off); summary calls ask for none.
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
	// Cost is the model's price (model.prices); nil when unknown, and the
	// usage of its answers then costs 0.
	Cost *agent.ModelCost `json:"cost,omitempty"`
}

// CallModelInput is the input of CallModel. The run context is the branch
// of the session file that ends at LeafID: dropping a failed message from
// the run context is just not advancing the leaf.
type CallModelInput struct {
	SessionID string   `json:"sessionId"`
	LeafID    string   `json:"leafId"`
	EntryID   string   `json:"entryId"`
	Model     ModelRef `json:"model"`
	// Tools names the tools offered to the model (their specs are sent
	// with the request).
	Tools []string `json:"tools,omitempty"`
	// PromptEntryID is the user message that started the prompt: the
	// scripted provider's fault script counts the model calls from it, so
	// steer and follow-up messages delivered since do not restart it.
	PromptEntryID string `json:"promptEntryId,omitempty"`
	// FaultsAt is where the prompt's fault scripts are kept beside the
	// session (BeginPromptInput.Faults; "": Model's own, if any).
	FaultsAt string `json:"faultsAt,omitempty"`
}

// CallModelResult is what the workflow needs of the assistant message; the
// whole message is in the session file under EntryID.
type CallModelResult struct {
	EntryID    string           `json:"entryId"`
	StopReason agent.StopReason `json:"stopReason"`
	ModelError
	Usage *agent.Usage `json:"usage,omitempty"`
	// Billed is what all the answers of a paused turn (continuePaused)
	// were billed, the last one's included; nil for one answer, whose
	// Usage it is. Usage stays the last answer's: the context's size.
	Billed *agent.Usage `json:"billed,omitempty"`
	Text   string       `json:"text,omitempty"`
	// CredentialID is the id (never the secret) of the credential used.
	CredentialID string `json:"credentialId,omitempty"`
	// ToolCalls are the tool calls of the answer, in order (StopReason
	// "toolUse"); their arguments are in the session entry.
	ToolCalls []ToolCallRef `json:"toolCalls,omitempty"`
	// HeldMs is how long the call held for its credential's rate-limit
	// window before it was sent (coordinated backoff; 0: not held).
	HeldMs int64 `json:"heldMs,omitempty"`
	// MCPTools are the MCP servers' tools the model was offered.
	MCPTools []string `json:"mcpTools,omitempty"`
}

// ModelError is what a provider reported of a failed model call (the
// error fields of agent.Message), as the workflow's retry policy reads it.
type ModelError struct {
	ErrorMessage string `json:"errorMessage,omitempty"`
	ErrorStatus  int    `json:"errorStatus,omitempty"`
	ErrorType    string `json:"errorType,omitempty"`
	ShouldRetry  *bool  `json:"shouldRetry,omitempty"`
	// RetryAfterMs is the provider's structured retry hint
	// (agent.Message.RetryAfterMs); nil when it sent none.
	RetryAfterMs *int64 `json:"retryAfterMs,omitempty"`
}

// ModelErrorOf is the error of m.
func ModelErrorOf(m agent.Message) ModelError {
	return ModelError{ErrorMessage: m.ErrorMessage, ErrorStatus: m.ErrorStatus, ErrorType: m.ErrorType,
		ShouldRetry: m.ShouldRetry, RetryAfterMs: m.RetryAfterMs}
}

// Outcome is what the retry policy sees of a call that stopped for stop
// with this error.
func (e ModelError) Outcome(stop agent.StopReason) retry.Outcome {
	return retry.Outcome{StopReason: string(stop), ErrorMessage: e.ErrorMessage, ErrorStatus: e.ErrorStatus,
		ErrorType: e.ErrorType, ShouldRetry: e.ShouldRetry, RetryAfterMs: e.RetryAfterMs}
}

// AppendEntriesInput is the input of AppendEntries.
type AppendEntriesInput struct {
	SessionID string          `json:"sessionId"`
	Entries   []session.Entry `json:"entries"`
	// ForkFrom, when set, first creates the session as a fork of that
	// session: its workspace and tool host, and its branch up to
	// ForkThrough ("": no entries) with the same entry ids.
	ForkFrom    string `json:"forkFrom,omitempty"`
	ForkThrough string `json:"forkThrough,omitempty"`
	// ForkWorkspace, when set, is the fork's workspace (Cwd, Worktree).
	ForkWorkspace *session.Header `json:"forkWorkspace,omitempty"`
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
	Exists       bool   `json:"exists"`
	LeafID       string `json:"leafId,omitempty"`
	MessageCount int    `json:"messageCount"`
	// Workspace and Host are the session header's cwd and host.
	Workspace string `json:"workspace,omitempty"`
	Host      string `json:"host,omitempty"`
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
type MarkUsageLimitResult = auth.Switch

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
	// FaultsAt is as in CallModelInput: the summary fault script of a
	// compaction inside a prompt is kept beside the session.
	FaultsAt string `json:"faultsAt,omitempty"`
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
	// failed (ModelError says why).
	StopReason agent.StopReason `json:"stopReason,omitempty"`
	ModelError
	// Usage is what the summary calls of this attempt reported, priced as
	// the prompt's model calls are (nil: none reported any): a prompt's
	// budget counts it.
	Usage *agent.Usage `json:"usage,omitempty"`
}

// ToolCallRef is what the workflow knows of one tool call the model asked
// for: its id, its tool, and a bounded preview of its arguments (the
// whole arguments stay in the session entry of the assistant message).
type ToolCallRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// ArgsPreview is the arguments with long string values shortened
	// (ArgsPreview), always a JSON object.
	ArgsPreview json.RawMessage `json:"argsPreview,omitempty"`
	// Summary is the argument a person recognises the call by (a bash
	// command, a path, a pattern), shortened.
	Summary string `json:"summary,omitempty"`
	// TimeoutSec is the call's own timeout argument (bash), 0 if none or
	// if the tool refuses it (ToolCallRefs); at most tools.MaxBashTimeout.
	TimeoutSec float64 `json:"timeoutSec,omitempty"`
	// PolicyArg is the argument the approval policy matches: a bash
	// call's command, another tool's path; at most MaxPolicyArgBytes of
	// it (PolicyArgCut says it was cut).
	PolicyArg    string `json:"policyArg,omitempty"`
	PolicyArgCut bool   `json:"policyArgCut,omitempty"`
}

// MaxPolicyArgBytes bounds ToolCallRef.PolicyArg, so history per model
// call stays bounded.
const MaxPolicyArgBytes = 1024

// Values of BeginPromptInput.Worktree.
const (
	// WorktreeNew gives a new session a worktree; an existing session
	// keeps its workspace, with or without one (session.worktree).
	WorktreeNew = "new"
	// WorktreeRequired is WorktreeNew, and an existing session without a
	// worktree is an error (starter prompt --worktree).
	WorktreeRequired = "required"
)

// BeginPromptInput is the input of BeginPrompt (a local activity).
type BeginPromptInput struct {
	SessionID string `json:"sessionId"`
	// Workspace is the workspace a new session is created with; an
	// existing session keeps its own.
	Workspace string `json:"workspace,omitempty"`
	// Worktree makes a new session's workspace a git worktree of
	// Workspace's repository (internal/worktree): WorktreeNew or
	// WorktreeRequired; "": none.
	Worktree string `json:"worktree,omitempty"`
	// ParentSession is written in a new session's header: the session
	// whose task call made it (a sub-agent).
	ParentSession string `json:"parentSession,omitempty"`
	// ToolHost, when set, is a new session's tool host instead of this
	// worker's: a sub-agent's session works in its parent's workspace,
	// on the parent's host.
	ToolHost string `json:"toolHost,omitempty"`
	// UserEntryID is the id the user message is written under (chosen by
	// the workflow). Empty: nothing is written (a continued run).
	UserEntryID string `json:"userEntryId,omitempty"`
	Message     string `json:"message,omitempty"`
	// Images are image blocks sent with the message (RPC prompt images).
	Images      []agent.ContentBlock `json:"images,omitempty"`
	TimestampMs int64                `json:"timestampMs,omitempty"`
	// NeedWorkspace makes a session without a usable workspace an error
	// (the prompt offers tools).
	NeedWorkspace bool `json:"needWorkspace,omitempty"`
	// SessionUsage asks for the usage of the session's earlier prompts
	// (a session-wide budget).
	SessionUsage bool `json:"sessionUsage,omitempty"`
	// Faults and SummaryFaults are the prompt's fault scripts (ModelRef):
	// BeginPrompt keeps them beside the session under UserEntryID, once
	// per prompt, where CallModel and Summarize read them (FaultsAt), so
	// history per model call stays flat however long the script is.
	Faults        []string `json:"faults,omitempty"`
	SummaryFaults []string `json:"summaryFaults,omitempty"`
	// Tools, SystemPrompt and AppendSystemPrompt shape the session's
	// system prompt (the enabled tools' guidelines, agent.systemPrompt,
	// agent.appendSystemPrompt); only the session's first prompt builds
	// it, later prompts' values are not used.
	Tools              []string `json:"tools,omitempty"`
	SystemPrompt       string   `json:"systemPrompt,omitempty"`
	AppendSystemPrompt string   `json:"appendSystemPrompt,omitempty"`
}

// BeginPromptResult describes the session the prompt runs in.
type BeginPromptResult struct {
	// LeafID is where the run context ends: the user entry when one was
	// written.
	LeafID       string `json:"leafId,omitempty"`
	MessageCount int    `json:"messageCount"`
	// Workspace is the session's workspace (from its header).
	Workspace string `json:"workspace,omitempty"`
	// ToolHost is the worker host that holds the workspace when tools
	// are placed by host: tool calls go to ToolQueue(taskQueue, ToolHost).
	// "" runs them on the prompt's task queue (any worker).
	ToolHost string `json:"toolHost,omitempty"`
	// Worktree: the session works in a git worktree of its own, so the
	// prompt says where its branch stands when it ends (WorktreeSummary).
	Worktree bool `json:"worktree,omitempty"`
	// Warnings are problems the session reader skipped over (torn or
	// garbage lines), for the state query and the worker log.
	Warnings []string `json:"warnings,omitempty"`
	// RequireApproval is the worker's floor (ToolPolicy.RequireApproval):
	// tools whose calls wait for approval whatever the prompt asked. It
	// reaches the workflow here, recorded in history with the result.
	RequireApproval []string `json:"requireApproval,omitempty"`
	// Grants are the session's "allow for this session" grants
	// (RecordGrant), which the prompt applies.
	Grants []policy.Grant `json:"grants,omitempty"`
	// SessionSpent is the usage of every assistant message of the session
	// before this prompt, on any branch (set when asked: SessionUsage).
	SessionSpent *agent.Spend `json:"sessionSpent,omitempty"`
	// SystemPromptHash is the hex SHA-256 of the session's system prompt
	// (its text stays in the session store, out of history); "" when
	// BeginPrompt wrote no user message.
	SystemPromptHash string `json:"systemPromptHash,omitempty"`
	// ModelQueues says the worker runs model calls on a task queue per
	// provider (ModelQueue; model.maxConcurrentCalls or
	// model.callsPerSecond set). Recorded in history with the result, so
	// a replay routes the calls as the run did.
	ModelQueues bool `json:"modelQueues,omitempty"`
}

// ToolQueue is the task queue of the tool calls of sessions held by host:
// the worker on that host polls it beside the shared queue.
func ToolQueue(taskQueue, host string) string {
	return taskQueue + "@" + host
}

// ModelQueue is the task queue of the model calls (CallModel, Summarize)
// of provider when the worker limits them fleet-wide
// (model.maxConcurrentCalls, model.callsPerSecond): the per-worker
// concurrency bound and the server-side rate limit of a task queue apply
// to that provider's calls only, and tool calls and workflow tasks never
// wait behind them.
func ModelQueue(taskQueue, provider string) string {
	return taskQueue + "-model-" + provider
}

// RunToolInput is the input of RunTool. The arguments are read from the
// assistant entry that holds the call, so history carries ids only.
type RunToolInput struct {
	SessionID        string `json:"sessionId"`
	AssistantEntryID string `json:"assistantEntryId"`
	ToolCallID       string `json:"toolCallId"`
	ToolName         string `json:"toolName"`
	// ResultEntryID is the entry the toolResult message is written under,
	// ParentID its parent (the previous result of the batch, or the
	// assistant entry): results chain in the order of the calls.
	ResultEntryID string      `json:"resultEntryId"`
	ParentID      string      `json:"parentId"`
	Workspace     string      `json:"workspace"`
	Tools         agent.Tools `json:"tools"`
	// TrackFiles asks a bash call for the files that changed in the
	// workspace since Checkpoint, the turn's (Files, FilesMore, FilesNote;
	// checkpoint.go): set for a sub-agent working in its parent's
	// workspace.
	TrackFiles bool   `json:"trackFiles,omitempty"`
	Checkpoint string `json:"checkpoint,omitempty"`
	// PathRules are the approval policy's path rules the tool applies to
	// the real locations its call reaches (symbolic links resolved, the
	// files of a walk; tools.Options.PathRule): only the rules of the
	// call's tool, nil when none could refuse a path.
	PathRules *policy.PathRules `json:"pathRules,omitempty"`
}

// RunToolResult is what the workflow keeps of a tool result: whether it
// failed and a short preview; the content is in the session entry.
type RunToolResult struct {
	EntryID string `json:"entryId"`
	IsError bool   `json:"isError"`
	// Preview is the start of the result text (at most PreviewChars).
	Preview string `json:"preview,omitempty"`
	// Bytes is the size of the whole result text.
	Bytes int `json:"bytes"`
	// Truncated says Preview is shorter than the result.
	Truncated bool `json:"truncated,omitempty"`
	// Reused says the result was already in the session (a re-run did not
	// execute the tool again).
	Reused bool `json:"reused,omitempty"`
	// Usage is what a sub-agent (a task call) spent, its own sub-agents
	// included: the parent's usage and budget count it.
	Usage *agent.Spend `json:"usage,omitempty"`
	// Files and FilesMore are the files a sub-agent in the caller's
	// workspace changed (workflows.PromptResult.FilesChanged): the
	// caller counts them as its own. For a bash call with TrackFiles,
	// the files that changed in the workspace since the turn's checkpoint
	// (relative to the workspace), or FilesNote says why they are not
	// known.
	Files     []string `json:"files,omitempty"`
	FilesMore int      `json:"filesMore,omitempty"`
	FilesNote string   `json:"filesNote,omitempty"`
	// FilesTracked says Files is a bash call's list (possibly empty).
	FilesTracked bool `json:"filesTracked,omitempty"`
}

// RecordEntryInput is the input of RecordEntry (a local activity).
type RecordEntryInput struct {
	SessionID string        `json:"sessionId"`
	Entry     session.Entry `json:"entry"`
}

// RecordEntryResult describes the entry that is in the session under the
// id afterwards: the one written, or the one an activity wrote first.
type RecordEntryResult struct {
	Written bool `json:"written"`
	// Message summarises the stored message (nil for other entry types).
	Model *CallModelResult `json:"model,omitempty"`
	Tool  *RunToolResult   `json:"tool,omitempty"`
}
