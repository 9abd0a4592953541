package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
)

// Command types: the terminal agent's (@mariozechner/pi-coding-agent
// 0.73.1, RpcCommand) plus approve_tool. The signal-like ones equal the
// workflow's signal and update names (agent.SignalAbortRetry, ...), so
// the same word works over RPC and with `temporal workflow signal --name`.
const (
	CmdPrompt               = "prompt"
	CmdSteer                = agent.SignalSteer
	CmdFollowUp             = agent.SignalFollowUp
	CmdAbort                = agent.SignalAbort
	CmdNewSession           = "new_session"
	CmdGetState             = "get_state"
	CmdSetModel             = "set_model"
	CmdCycleModel           = "cycle_model"
	CmdGetAvailableModels   = "get_available_models"
	CmdSetThinkingLevel     = "set_thinking_level"
	CmdCycleThinkingLevel   = "cycle_thinking_level"
	CmdSetSteeringMode      = "set_steering_mode"
	CmdSetFollowUpMode      = "set_follow_up_mode"
	CmdCompact              = "compact"
	CmdSetAutoCompaction    = "set_auto_compaction"
	CmdSetAutoRetry         = agent.SignalSetAutoRetry
	CmdAbortRetry           = agent.SignalAbortRetry
	CmdBash                 = "bash"
	CmdAbortBash            = "abort_bash"
	CmdGetSessionStats      = "get_session_stats"
	CmdExportHTML           = "export_html"
	CmdSwitchSession        = "switch_session"
	CmdFork                 = "fork"
	CmdClone                = "clone"
	CmdGetForkMessages      = "get_fork_messages"
	CmdGetLastAssistantText = "get_last_assistant_text"
	CmdSetSessionName       = "set_session_name"
	CmdGetMessages          = "get_messages"
	CmdGetCommands          = "get_commands"
	// CmdApproveTool is ours (the terminal agent has no tool approval):
	// the approve_tool update of the running prompt.
	CmdApproveTool = agent.UpdateApproveTool
	// CmdRewind is ours (pi's protocol has no rewind): the session's
	// files and conversation back at a checkpoint (docs/spec.md 20.5).
	CmdRewind = "rewind"
	// pi 1.6's (@earendil-works/pi-coding-agent 1.6.0).
	CmdClearQueue                 = "clear_queue"
	CmdGetAvailableThinkingLevels = "get_available_thinking_levels"
	CmdGetEntries                 = "get_entries"
	CmdGetTree                    = "get_tree"
)

// ParseCommand is the Response.Command of a line that has no usable
// command type (not JSON, not an object, no "type").
const ParseCommand = "parse"

// ResponseType is the "type" of every response line; any other type on
// stdout is an event.
const ResponseType = "response"

// Streaming behaviours of a prompt sent while one runs.
const (
	StreamingSteer    = "steer"
	StreamingFollowUp = "followUp"
)

// Command is one line sent to the RPC process. Only the fields of Type
// are sent; the server rejects fields that do not belong to the type.
type Command struct {
	// ID is echoed in the response ("" sends none).
	ID   string `json:"id,omitempty"`
	Type string `json:"type"`
	// Message is the user message of prompt, steer and follow_up.
	Message string `json:"message,omitempty"`
	// Images go with a prompt's message (base64 image blocks).
	Images []agent.ContentBlock `json:"images,omitempty"`
	// StreamingBehavior queues a prompt sent while one runs:
	// StreamingSteer or StreamingFollowUp ("": such a prompt is refused
	// with "session busy").
	StreamingBehavior string `json:"streamingBehavior,omitempty"`
	// Enabled is the value of set_auto_retry and set_auto_compaction.
	Enabled *bool `json:"enabled,omitempty"`
	// CustomInstructions steer the summary of compact (optional).
	CustomInstructions string `json:"customInstructions,omitempty"`
	// ParentSession of new_session (accepted, not recorded).
	ParentSession string `json:"parentSession,omitempty"`
	// Provider and ModelID of set_model.
	Provider string `json:"provider,omitempty"`
	ModelID  string `json:"modelId,omitempty"`
	// Level of set_thinking_level.
	Level string `json:"level,omitempty"`
	// Mode of set_steering_mode and set_follow_up_mode.
	Mode string `json:"mode,omitempty"`
	// Command of bash.
	Command string `json:"command,omitempty"`
	// ExcludeFromContext of bash: the command is recorded in the session
	// but its output is not sent to the model (pi's `!!`).
	ExcludeFromContext bool `json:"excludeFromContext,omitempty"`
	// OutputPath of export_html.
	OutputPath string `json:"outputPath,omitempty"`
	// SessionPath of switch_session: a session file or a session id.
	SessionPath string `json:"sessionPath,omitempty"`
	// EntryID of fork.
	EntryID string `json:"entryId,omitempty"`
	// Since of get_entries: only the entries after this one.
	Since string `json:"since,omitempty"`
	// Name of set_session_name.
	Name string `json:"name,omitempty"`
	// ToolCallID, Approved, Reason and Scope ("session": allow for this
	// session) of approve_tool.
	ToolCallID string `json:"toolCallId,omitempty"`
	Approved   *bool  `json:"approved,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Scope      string `json:"scope,omitempty"`
	// To and Force of rewind: the checkpoint (starter checkpoints
	// numbers them), and rewind over changes no checkpoint recorded.
	To    int  `json:"to,omitempty"`
	Force bool `json:"force,omitempty"`
}

// RewindData is the data of rewind: the checkpoint a rewind to undoes it.
type RewindData struct {
	Undo int `json:"undo"`
}

// Response answers one command.
type Response struct {
	ID      string `json:"id,omitempty"`
	Type    string `json:"type"`
	Command string `json:"command"`
	Success bool   `json:"success"`
	// Data is the command's result, absent for plain success.
	Data json.RawMessage `json:"data,omitempty"`
	// Error says why the command failed, in one line.
	Error string `json:"error,omitempty"`
}

// PromptData is the data of a prompt's acknowledgement (ours; the
// terminal agent's has none): the workflow that runs it (inspect it in
// the Temporal UI or with `temporal workflow`). A prompt queued with
// streamingBehavior has none.
type PromptData struct {
	// Disposition is pi 1.6's: "started" (a prompt of its own runs),
	// "queued" (steer, follow_up, or a prompt with streamingBehavior).
	Disposition string `json:"disposition"`
	WorkflowID  string `json:"workflowId,omitempty"`
	RunID       string `json:"runId,omitempty"`
}

// Dispositions of a prompt, steer or follow_up (pi 1.6's
// PromptDisposition; "handled" never happens here: there are no
// extension commands).
const (
	DispositionStarted = "started"
	DispositionQueued  = "queued"
)

// Events this protocol adds to the product's agent.Event stream (pi 1.6).
const (
	// EventAgentSettled follows prompt_end: the session is idle (after
	// retries, overflow compaction and follow-ups), so a prompt sent now
	// starts. pi 1.6's waitForIdle and promptAndWait wait for it.
	EventAgentSettled = "agent_settled"
	// EventQueueUpdate is the messages queued for the next prompt by
	// this connection whenever they change.
	EventQueueUpdate = "queue_update"
	// EventThinkingLevelChanged and EventSessionInfoChanged follow a
	// change this connection made (set_thinking_level,
	// cycle_thinking_level; set_session_name), before its response.
	EventThinkingLevelChanged = "thinking_level_changed"
	EventSessionInfoChanged   = "session_info_changed"
	// EventCompactionStart and EventCompactionEnd are pi's names (0.73.1
	// and 1.6 agree) for the product's auto_compaction_start/_end, and
	// for a manual compact's start and end.
	EventCompactionStart = "compaction_start"
	EventCompactionEnd   = "compaction_end"
	// EventSummarizationRetryScheduled and EventSummarizationRetryFinished
	// are a compaction summary call's auto_retry_start/_end (pi 1.6).
	EventSummarizationRetryScheduled = "summarization_retry_scheduled"
	EventSummarizationRetryFinished  = "summarization_retry_finished"
	// EventBashExecutionUpdate is output of a running bash command, sent
	// to the connection that asked for it (pi 1.6).
	EventBashExecutionUpdate = "bash_execution_update"
)

// ConnectionEvent says whether an event type is one of this protocol's
// own (above), written by the connection: such events carry no seq and
// are not in the session's event log.
func ConnectionEvent(typ string) bool {
	switch typ {
	case EventAgentSettled, EventQueueUpdate, EventThinkingLevelChanged, EventSessionInfoChanged, EventBashExecutionUpdate:
		return true
	}
	return false
}

// ThinkingLevelEvent is thinking_level_changed.
type ThinkingLevelEvent struct {
	Type string `json:"type"`
	ThinkingLevelData
}

// SessionInfoEvent is session_info_changed.
type SessionInfoEvent struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// BashUpdateEvent is bash_execution_update: Delta is output the command
// printed since the previous one; ID is the bash command's id. The bash
// response's output stays whole and authoritative: an update is skipped
// when more output than a live tail holds came between two reads.
type BashUpdateEvent struct {
	Type  string `json:"type"`
	ID    string `json:"id,omitempty"`
	Delta string `json:"delta"`
}

// SettledEvent is agent_settled: aborted when the prompt was aborted.
type SettledEvent struct {
	Type    string `json:"type"`
	Aborted bool   `json:"aborted"`
}

// QueueEvent is queue_update: the texts of the queued messages.
type QueueEvent struct {
	Type string `json:"type"`
	QueueData
}

// ThinkingLevelsData is the data of get_available_thinking_levels.
type ThinkingLevelsData struct {
	Levels []string `json:"levels"`
}

// EntriesData is the data of get_entries: session entries in the session
// file's shape, and the current leaf.
type EntriesData struct {
	Entries []json.RawMessage `json:"entries"`
	LeafID  string            `json:"leafId,omitempty"`
}

// TreeData is the data of get_tree: the entries as a tree by parentId.
type TreeData struct {
	Tree   []*TreeNode `json:"tree"`
	LeafID string      `json:"leafId,omitempty"`
}

// TreeNode is one entry of get_tree with its children.
type TreeNode struct {
	Entry    json.RawMessage `json:"entry"`
	Children []*TreeNode     `json:"children"`
}

// QueueData is the data of clear_queue: the texts it removed.
type QueueData struct {
	Steering []string `json:"steering"`
	FollowUp []string `json:"followUp"`
}

// Model is the terminal agent's Model object (get_state, set_model,
// get_available_models), built from the settings.
type Model struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	API      string `json:"api"`
	Provider string `json:"provider"`
	BaseURL  string `json:"baseUrl"`
	// Reasoning: the model takes a thinking level.
	Reasoning     bool            `json:"reasoning"`
	Input         []string        `json:"input"`
	ContextWindow int             `json:"contextWindow"`
	MaxTokens     int             `json:"maxTokens"`
	Cost          agent.ModelCost `json:"cost"`
}

// SessionState is the data of get_state: the terminal agent's
// RpcSessionState (model as an object, thinkingLevel, the queue modes,
// the session file and name) on top of the workflow's state (ours:
// autoRetryEnabled, isRetrying, retryAttempt, pendingRetry, status,
// pendingApprovals, ...). Its "model" replaces the state's model name;
// "provider" stays.
type SessionState struct {
	agent.State
	Model         *Model `json:"model"`
	ThinkingLevel string `json:"thinkingLevel"`
	SteeringMode  string `json:"steeringMode"`
	FollowUpMode  string `json:"followUpMode"`
	SessionFile   string `json:"sessionFile,omitempty"`
	SessionName   string `json:"sessionName,omitempty"`
}

// CycleModelData is the data of cycle_model (null with one model).
type CycleModelData struct {
	Model         Model  `json:"model"`
	ThinkingLevel string `json:"thinkingLevel"`
	IsScoped      bool   `json:"isScoped"`
}

// ModelsData is the data of get_available_models.
type ModelsData struct {
	Models []Model `json:"models"`
}

// ThinkingLevelData is the data of cycle_thinking_level.
type ThinkingLevelData struct {
	Level string `json:"level"`
}

// MessagesData is the data of get_messages: the session's run context
// (after a compaction: the summary, then the kept messages).
type MessagesData struct {
	Messages []agent.Message `json:"messages"`
}

// LastAssistantTextData is the data of get_last_assistant_text: the text
// of the last assistant message that did not fail, or null.
type LastAssistantTextData struct {
	Text *string `json:"text"`
}

// NothingToCompactError is compact's error when the recent messages are
// the whole context (the terminal agent's wording).
const NothingToCompactError = "Nothing to compact (session too small)"

// BashResult is the data of bash: the terminal agent's BashResult.
type BashResult struct {
	Output string `json:"output"`
	// ExitCode is nil when the command did not exit (cancelled).
	ExitCode       *int   `json:"exitCode"`
	Cancelled      bool   `json:"cancelled"`
	Truncated      bool   `json:"truncated"`
	FullOutputPath string `json:"fullOutputPath,omitempty"`
}

// SessionStats is the data of get_session_stats.
type SessionStats struct {
	SessionFile       string        `json:"sessionFile,omitempty"`
	SessionID         string        `json:"sessionId"`
	UserMessages      int           `json:"userMessages"`
	AssistantMessages int           `json:"assistantMessages"`
	ToolCalls         int           `json:"toolCalls"`
	ToolResults       int           `json:"toolResults"`
	TotalMessages     int           `json:"totalMessages"`
	Tokens            TokenStats    `json:"tokens"`
	Cost              float64       `json:"cost"`
	ContextUsage      *ContextUsage `json:"contextUsage,omitempty"`
	// Usage is what every model call of the session spent: all its
	// assistant messages, failed attempts and other branches included
	// (tokens and cost count the run context only). Budgets count it.
	Usage agent.Spend `json:"usage"`
}

// TokenStats sums the assistant messages' usage.
type TokenStats struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead"`
	CacheWrite int `json:"cacheWrite"`
	Total      int `json:"total"`
}

// ContextUsage is the context window's use: Tokens and Percent are nil
// after a compaction until an answer reports usage again.
type ContextUsage struct {
	Tokens        *int     `json:"tokens"`
	ContextWindow int      `json:"contextWindow"`
	Percent       *float64 `json:"percent"`
}

// CancelledData is the data of new_session, switch_session and clone
// (cancelled is always false: there are no extensions to cancel).
type CancelledData struct {
	Cancelled bool `json:"cancelled"`
}

// ForkData is the data of fork: the text of the user message forked
// from.
type ForkData struct {
	Text      string `json:"text"`
	Cancelled bool   `json:"cancelled"`
}

// ForkMessage is a user message fork may start from.
type ForkMessage struct {
	EntryID string `json:"entryId"`
	Text    string `json:"text"`
}

// ForkMessagesData is the data of get_fork_messages.
type ForkMessagesData struct {
	Messages []ForkMessage `json:"messages"`
}

// CommandsData is the data of get_commands (always empty: no prompt
// templates, skills or extensions).
type CommandsData struct {
	Commands []any `json:"commands"`
}

// Line is one line of the RPC process's stdout: a response or an event.
type Line struct {
	Response *Response
	Event    *agent.Event
}

// DecodeLine parses one stdout line.
func DecodeLine(b []byte) (Line, error) {
	b = bytes.TrimSpace(b)
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return Line{}, fmt.Errorf("rpc: decode line %q: %w", line.Cut(string(b), 121), err)
	}
	if head.Type == "" {
		return Line{}, fmt.Errorf("rpc: decode line %q: no type", line.Cut(string(b), 121))
	}
	if head.Type == ResponseType {
		var r Response
		if err := json.Unmarshal(b, &r); err != nil {
			return Line{}, fmt.Errorf("rpc: decode response %q: %w", line.Cut(string(b), 121), err)
		}
		return Line{Response: &r}, nil
	}
	var e agent.Event
	if err := json.Unmarshal(b, &e); err != nil {
		return Line{}, fmt.Errorf("rpc: decode event %q: %w", line.Cut(string(b), 121), err)
	}
	return Line{Event: &e}, nil
}
