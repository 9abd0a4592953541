package agent

import "time"

// MemoJob is the memo key of a running prompt's JobStatus: a list of
// running workflows (starter top, the Temporal UI) shows what each job
// is doing from its memo, without a query per job.
const MemoJob = "job"

// Search attributes a prompt sets beside its memo when the namespace has
// them (internal/app/jobsearch.go registers them): the Temporal UI's list and
// `temporal workflow list --query` filter jobs by them, e.g.
// DurableAgentStatus = 'approval'.
const (
	SearchAttrStatus  = "DurableAgentStatus"  // Keyword: JobStatus.Status
	SearchAttrTokens  = "DurableAgentTokens"  // Int: JobStatus.Tokens
	SearchAttrCostUsd = "DurableAgentCostUsd" // Double: JobStatus.CostUsd
)

// Job statuses: what a running prompt is doing (JobStatus.Status); a
// closed prompt's memo keeps the last one it published.
const (
	JobModel       = "model"        // a model call is in flight
	JobTool        = "tool"         // tool calls are running
	JobBackoff     = "backoff"      // a retry's durable timer runs (Until: when it fires)
	JobApproval    = "approval"     // tool calls wait for approve_tool
	JobCompacting  = "compacting"   // a compaction's summary call runs
	JobWaitingHost = "waiting_host" // a tool call waits for its workspace's host
	JobRunning     = "running"      // between those
)

// JobStatus is the memo of a running prompt (MemoJob). It is published
// when the prompt's workflow waits and what it waits for has changed, so
// its history grows by at most a few records per model call.
type JobStatus struct {
	Status string `json:"status"`
	// Since is when Status began (workflow time).
	Since time.Time `json:"since"`
	// Until is when the pending retry fires (Status backoff).
	Until *time.Time `json:"until,omitempty"`
	// Turn is the prompt's model turn (1-based).
	Turn int `json:"turn"`
	// ToolCalls counts the prompt's tool calls started in this run.
	ToolCalls int `json:"toolCalls"`
	// Tokens and CostUsd are the prompt's usage so far (Spend).
	Tokens  int64   `json:"tokens"`
	CostUsd float64 `json:"costUsd"`
}
