package agent

import "time"

// Prompt statuses, reported by State.Status and the prompt_end event.
const (
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
	// Warnings are problems the session reader skipped over (a torn last
	// line, garbage lines), so a user can see why something is missing.
	Warnings []string `json:"warnings,omitempty"`
}

// PendingRetry describes a running backoff timer.
type PendingRetry struct {
	Attempt     int       `json:"attempt"`
	MaxAttempts int       `json:"maxAttempts"`
	DelayMs     int64     `json:"delayMs"`
	WakeAt      time.Time `json:"wakeAt"`
}
