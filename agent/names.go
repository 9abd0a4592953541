package agent

import "time"

// Signal names. They equal the RPC command names so that
// `temporal workflow signal --name abort_retry` works by hand.
const (
	// SignalAbortRetry cancels a pending retry backoff and ends the chain.
	SignalAbortRetry = "abort_retry"
	// SignalAbort aborts the retry first, then the in-flight model call.
	SignalAbort = "abort"
	// SignalSetAutoRetry carries SetAutoRetryPayload ({"enabled": bool}).
	SignalSetAutoRetry = "set_auto_retry"
	// SignalSteer carries UserMessagePayload: delivered after the current
	// tool batch (the batch's remaining calls are skipped).
	SignalSteer = "steer"
	// SignalFollowUp carries UserMessagePayload: delivered when the loop
	// would otherwise end.
	SignalFollowUp = "follow_up"
)

// Update names.
const (
	// UpdateApproveTool carries ApproveToolPayload and decides a tool call
	// waiting for approval (tools.requireApproval).
	UpdateApproveTool = "approve_tool"
)

// UserMessagePayload is the payload of the steer and follow_up signals.
type UserMessagePayload struct {
	Message string `json:"message"`
	// Images go with the message (the rules of a prompt's images).
	Images []ContentBlock `json:"images,omitempty"`
	// SentAt is when the sender sent it (QueuedMessage.SentAt).
	SentAt time.Time `json:"sentAt,omitempty"`
}

// ApproveToolPayload is the argument of the approve_tool update.
type ApproveToolPayload struct {
	ToolCallID string `json:"toolCallId"`
	Approved   bool   `json:"approved"`
	Reason     string `json:"reason,omitempty"`
	// Scope ApprovalScopeSession also allows, for the rest of the
	// session, later calls the same policy rule asks for (same tool;
	// for bash the same program). "" decides this call only.
	Scope string `json:"scope,omitempty"`
}

// ApprovalScopeSession is the approve_tool scope "allow for this session".
const ApprovalScopeSession = "session"

// Query names.
const (
	// QueryState returns State.
	QueryState = "state"
	// QueryEvents takes an optional sequence number and returns the events
	// after it ([]Event).
	QueryEvents = "events"
)

// Event types. Values equal the names streamed by RPC mode.
const (
	EventAgentStart          = "agent_start"
	EventTurnStart           = "turn_start"
	EventTurnEnd             = "turn_end"
	EventMessageStart        = "message_start"
	EventMessageUpdate       = "message_update"
	EventToolExecutionStart  = "tool_execution_start"
	EventToolExecutionUpdate = "tool_execution_update"
	EventToolExecutionEnd    = "tool_execution_end"
	EventMessageEnd          = "message_end"
	EventAgentEnd            = "agent_end"
	EventAutoRetryStart      = "auto_retry_start"
	EventAutoRetryEnd        = "auto_retry_end"
	EventAutoCompactionStart = "auto_compaction_start"
	EventAutoCompactionEnd   = "auto_compaction_end"
	EventPromptEnd           = "prompt_end"
	// EventToolApprovalRequest: a tool call waits for approve_tool.
	EventToolApprovalRequest = "tool_approval_request"
	// EventSessionSettings: the session's own settings were changed
	// (Reason: "key value"), or a prompt runs with them rather than its
	// sender's (Reason names the keys that differ).
	EventSessionSettings = "session_settings"
	// EventSubAgentStart: a task call started its sub-agent, a session of
	// its own (SessionID) whose prompt is a child workflow;
	// EventSubAgentEnd: it ended, with the sub-agent's usage (its own
	// sub-agents' included).
	EventSubAgentStart = "subagent_start"
	EventSubAgentEnd   = "subagent_end"
	// EventQueueChanged: the prompt's queue changed (a steer or
	// follow_up was queued, edited, removed or delivered); the queue
	// query lists it. prompt_end hands back what is left without it.
	EventQueueChanged = "queue_changed"
	// EventCheckpointWarning: the turn's workspace checkpoint was not
	// taken (Reason says why); the turn went on.
	EventCheckpointWarning = "checkpoint_warning"
)

// SetAutoRetryPayload is the payload of the set_auto_retry signal.
type SetAutoRetryPayload struct {
	Enabled bool `json:"enabled"`
}

// Version is the release of this build, what `starter --version` and
// `worker --version` print. v0.1.0 is the baseline: the first release,
// whose workflow histories later releases replay (docs/spec.md,
// "Upgrades").
const Version = "v0.1.0"
