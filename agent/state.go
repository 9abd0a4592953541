package agent

import (
	"encoding/json"
	"time"
)

// Prompt statuses, reported by State.Status and the prompt_end event;
// StatusIdle is State.Status when the session runs no prompt (get_state
// answered from the settings and the session file).
const (
	StatusIdle      = "idle"
	StatusRunning   = "running"
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusAborted   = "aborted"
)

// State is the session state a client reads with the state query
// (RPC get_state). It carries model names and credential ids only.
type State struct {
	SessionID             string `json:"sessionId"`
	Model                 string `json:"model"`
	Provider              string `json:"provider"`
	Status                string `json:"status"`
	AutoRetryEnabled      bool   `json:"autoRetryEnabled"`
	AutoCompactionEnabled bool   `json:"autoCompactionEnabled"`
	IsRetrying            bool   `json:"isRetrying"`
	RetryAttempt          int    `json:"retryAttempt"`
	IsStreaming           bool   `json:"isStreaming"`
	IsCompacting          bool   `json:"isCompacting"`
	MessageCount          int    `json:"messageCount"`
	// PendingRetry is set while a backoff timer is running.
	PendingRetry *PendingRetry `json:"pendingRetry,omitempty"`
	LastSeq      int64         `json:"lastSeq"`
	// Turn is the prompt's current model turn (1-based).
	Turn int `json:"turn,omitempty"`
	// RunningTools names the tool calls in flight ("bash call_1").
	RunningTools []string `json:"runningTools,omitempty"`
	// Workspace is the session's workspace directory on its worker host.
	Workspace string `json:"workspace,omitempty"`
	// ToolHost is the worker host that runs the session's tool calls
	// (tools.placement host); "" when any worker may.
	ToolHost string `json:"toolHost,omitempty"`
	// WaitingForHost is set while a tool call waits for ToolHost: no
	// worker of that host has picked it up (the host is down or busy).
	WaitingForHost string `json:"waitingForHost,omitempty"`
	// Warnings are problems the session reader skipped over (a torn last
	// line, garbage lines), so a user can see why something is missing.
	Warnings []string `json:"warnings,omitempty"`
	// PendingMessageCount counts the steer and follow_up messages queued
	// and not delivered yet.
	PendingMessageCount int `json:"pendingMessageCount"`
	// SteeringMode and FollowUpMode are the prompt's delivery modes
	// (QueueModeAll or QueueModeOneAtATime).
	SteeringMode string `json:"steeringMode,omitempty"`
	FollowUpMode string `json:"followUpMode,omitempty"`
	// PendingApprovals lists the tool calls waiting for approve_tool, in
	// call order.
	PendingApprovals []PendingApproval `json:"pendingApprovals,omitempty"`
	// OmittedApprovals counts the calls waiting for approval that
	// PendingApprovals leaves out to keep the state query's answer within
	// MaxStateBytes (BoundState); their tool_approval_request events name
	// them.
	OmittedApprovals int `json:"omittedApprovals,omitempty"`
	// ToolDecisions are the approval policy's decisions of the latest
	// tool calls (at most MaxToolDecisions), oldest first.
	ToolDecisions []ToolDecision `json:"toolDecisions,omitempty"`
	// Usage is what the prompt's model calls spent so far (failed and
	// aborted attempts included when they reported usage).
	Usage *Spend `json:"usage,omitempty"`
	// Budget holds the prompt's budget.* limits and the session's usage
	// (set when a limit is).
	Budget *Budget `json:"budget,omitempty"`
}

// PendingApproval is a tool call waiting for approve_tool
// (tools.requireApproval).
type PendingApproval struct {
	ToolCallID string          `json:"toolCallId"`
	ToolName   string          `json:"toolName"`
	Args       json.RawMessage `json:"args"`
	// ExpiresAt is when the call is denied unless decided (unset:
	// tools.approvalTimeoutMs is 0, the wait has no end).
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
	// Why names the policy rule that asked (tools.policy); SessionScope
	// says what approving the call for the session allows.
	Why          string `json:"why,omitempty"`
	SessionScope string `json:"sessionScope,omitempty"`
}

// ToolDecision is the approval policy's decision of one tool call: its
// action (allow, ask, deny) and why (the rule that matched, or the
// session grant that allowed it).
type ToolDecision struct {
	ToolCallID string `json:"toolCallId"`
	ToolName   string `json:"toolName"`
	Policy     string `json:"policy"`
	Why        string `json:"why"`
}

// MaxToolDecisions bounds State.ToolDecisions.
const MaxToolDecisions = 16

// Delivery modes of queued messages (agent.steeringMode,
// agent.followUpMode): deliver every queued message at the next delivery
// point, or only the oldest one.
const (
	QueueModeAll        = "all"
	QueueModeOneAtATime = "one-at-a-time"
)

// QueueModes lists the delivery modes, the default first.
var QueueModes = []string{QueueModeOneAtATime, QueueModeAll}

// PendingRetry describes a running backoff timer.
type PendingRetry struct {
	Attempt     int       `json:"attempt"`
	MaxAttempts int       `json:"maxAttempts"`
	DelayMs     int64     `json:"delayMs"`
	WakeAt      time.Time `json:"wakeAt"`
}
