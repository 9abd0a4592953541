package workflows

import (
	"fmt"
	"strings"
	"time"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/compaction"
	toolpolicy "github.com/durableagent/durableagent/internal/policy"
	"github.com/durableagent/durableagent/retry"
)

// PromptWorkflowName is the registered name of the Prompt workflow.
const PromptWorkflowName = "Prompt"

// WorkflowIDPrefix starts every prompt's workflow id.
const WorkflowIDPrefix = "session-"

// WorkflowID is the workflow id of a session's prompts: with the
// "fail if running" conflict policy it makes a session run one prompt at a
// time, and lets any client find the running prompt from the session id.
func WorkflowID(sessionID string) string { return WorkflowIDPrefix + sessionID }

// Error types of a prompt that did not complete
// (temporal.ApplicationError.Type(); details hold the PromptResult).
const (
	ErrTypePromptFailed = "PromptFailed"
	ErrTypeBadInput     = "BadPromptInput"
)

// Default activity timeouts of the model call.
const (
	DefaultModelTimeout     = 10 * time.Minute
	DefaultHeartbeatTimeout = 20 * time.Second
)

// MaxInputBytes bounds a prompt's input as Temporal records it (the
// message, its images and the settings, encoded by the client's data
// converter), and a steer or follow-up message's signal: Temporal refuses
// a payload above 2 MiB, and the rest is room for what a continued run
// adds to the input (Carry) and for a payload codec. The client refuses a
// bigger message in one line before it starts anything
// (client.ErrMessageTooLarge).
const MaxInputBytes = 2<<20 - 64<<10

// PromptInput is the input of the Prompt workflow. It carries names, ids
// and settings only: never a secret, never the conversation.
type PromptInput struct {
	SessionID string `json:"sessionId"`
	Message   string `json:"message"`
	// Images go with the message as image blocks (RPC prompt images):
	// base64 data, at most MaxImageBytes in all, since the input is
	// recorded in history.
	Images []agent.ContentBlock `json:"images,omitempty"`
	Model  activities.ModelRef  `json:"model"`
	Retry  retry.Settings       `json:"retry"`
	// Compaction is the compaction settings group (zero: disabled);
	// client.PromptInput fills it from the settings.
	Compaction compaction.Settings `json:"compaction"`
	// ModelTimeoutMs is the model call's start-to-close timeout
	// (0: DefaultModelTimeout).
	ModelTimeoutMs int64 `json:"modelTimeoutMs,omitempty"`
	// HeartbeatTimeoutMs is the model call's heartbeat timeout
	// (0: DefaultHeartbeatTimeout). A worker that dies mid-call is noticed
	// after this long and the call becomes a retryable connection error.
	// Tool calls use the same heartbeat timeout.
	HeartbeatTimeoutMs int64 `json:"heartbeatTimeoutMs,omitempty"`

	// Workspace is the directory a new session is created with (the
	// starter's current directory by default). A session keeps the
	// workspace it was created with.
	Workspace string `json:"workspace,omitempty"`
	// Worktree gives a new session a git worktree of Workspace's
	// repository on a branch agent/<session>, which becomes its workspace
	// (BeginPrompt makes it): activities.WorktreeNew (the setting
	// session.worktree) or activities.WorktreeRequired (starter prompt
	// --worktree, which also refuses an existing session without one);
	// "": none.
	Worktree string `json:"worktree,omitempty"`
	// Host is the tool host a new session is created on (starter prompt
	// --host, or the host the starter found with its workspace); "": the
	// host of the worker that begins the prompt. An existing session
	// keeps its own.
	Host string `json:"host,omitempty"`
	// Tools says which tools the model may call (none: a chat).
	Tools agent.Tools `json:"tools,omitempty"`
	// Agent holds the loop's own settings.
	Agent agent.Settings `json:"agent,omitempty"`
	// Approval names the tool calls that wait for approve_tool before
	// they run (tools.requireApproval, tools.approvalTimeoutMs).
	Approval ToolApproval `json:"approval,omitempty"`
	// Budget holds the prompt's spending limits (settings group budget;
	// budget.go). Its zero value is no budget.
	Budget agent.BudgetLimits `json:"budget,omitempty"`
	// Continued is set on a run that continues a prompt as new: the state
	// carried over from the previous run. Callers never set it.
	Continued *Carry `json:"continued,omitempty"`
	// Parent is set on a sub-agent's prompt: the task call
	// that started it. Callers never set it.
	Parent *SubAgentParent `json:"parent,omitempty"`
	// Origin says who sent the prompt (OriginInteractive, OriginScheduled,
	// OriginDelegated; "": unknown): its model calls' task-queue priority
	// follows it (priority.go).
	Origin string `json:"origin,omitempty"`
}

// SubAgentParent is the task call a sub-agent's prompt runs for.
type SubAgentParent struct {
	SessionID  string `json:"sessionId"`
	ToolCallID string `json:"toolCallId"`
	// Depth is the sub-agent's depth: 1 for a sub-agent of a prompt a
	// user started.
	Depth int `json:"depth"`
	// ToolHost is the parent's tool host, which holds the workspace the
	// sub-agent works in ("": any worker).
	ToolHost string `json:"toolHost,omitempty"`
}

// ToolApproval is the approval policy of a prompt's tool calls: the
// sender's settings (Policy ends with policy.Default; none: only
// RequireApproval asks, every other call runs) and the grants in force.
type ToolApproval struct {
	agent.Approval
	// Grants are the "allow for this session" grants in force: the
	// session's (BeginPrompt) and those approve_tool gave in this prompt;
	// a continued run carries them. Callers leave it empty.
	Grants []toolpolicy.Grant `json:"grants,omitempty"`
}

// DefaultContinueAsNewEvents keeps a run far below Temporal's history
// limit of 51,200 events.
const DefaultContinueAsNewEvents = 10000

// Carry is the state a prompt carries into its next run when it continues
// as new: the loop's state, the event sequence and the settings changed by
// signals. The events themselves stay queryable on the previous run
// (Temporal records its run id in the next run's start).
type Carry struct {
	loop
	Seq       int64 `json:"seq"`
	AutoRetry bool  `json:"autoRetry"`
	// Runs counts the runs of this prompt before this one.
	Runs int `json:"runs"`
	// Queue is the queue (queue.go), QueueSeq the number of its last id.
	Queue    []agent.QueuedMessage `json:"queue,omitempty"`
	QueueSeq int                   `json:"queueSeq,omitempty"`
	// Spent is the prompt's usage so far, SessionSpent the session's
	// earlier prompts' (budget.go); StartedMs is when the prompt's first
	// run started (budget.maxDurationMs counts from it).
	Spent        *agent.Spend `json:"spent,omitempty"`
	SessionSpent *agent.Spend `json:"sessionSpent,omitempty"`
	StartedMs    int64        `json:"startedMs,omitempty"`
}

// loop is the state of a prompt's loop that its runs carry from one to
// the next (Carry): the run holds it, and a continued run starts from it.
type loop struct {
	// LeafID is the session entry the run context ends at, MessageCount
	// the number of its messages.
	LeafID       string `json:"leafId"`
	MessageCount int    `json:"messageCount"`
	// Turn numbers the model turns of the prompt from 1.
	Turn int `json:"turn"`
	// OverflowRecovered is set by an overflow compaction and cleared by a
	// successful answer: a second overflow in between fails the prompt.
	OverflowRecovered bool `json:"overflowRecovered,omitempty"`
	// Workspace is the session's workspace (from its header).
	Workspace string `json:"workspace,omitempty"`
	// PromptEntryID is the user message that started the prompt.
	PromptEntryID string `json:"promptEntryId,omitempty"`
	// FaultsAt is where BeginPrompt keeps the prompt's fault scripts
	// beside the session ("": none kept): a continued run's input carries
	// no script.
	FaultsAt string `json:"faultsAt,omitempty"`
	// ToolHost is the worker host that holds the session's workspace when
	// tools are placed by host: its task queue runs the tool calls ("":
	// any worker runs them).
	ToolHost string `json:"toolHost,omitempty"`
	// Worktree: the session works in a git worktree of its own, so its
	// prompt_end says where the branch stands (branchSummary).
	Worktree bool `json:"worktree,omitempty"`
	// ModelQueues: the model calls run on the provider's model queue
	// (activities.ModelQueue), as BeginPrompt said.
	ModelQueues bool `json:"modelQueues,omitempty"`
	// FollowUpDue: the loop would have ended, so the next model step
	// delivers follow-ups.
	FollowUpDue bool `json:"followUpDue,omitempty"`
	// ToolCalls and SubAgents count the tool calls and the sub-agents the
	// prompt started so far (job memo; agent.subagents.maxTotal counts
	// the latter).
	ToolCalls int `json:"toolCalls,omitempty"`
	SubAgents int `json:"subAgents,omitempty"`
	// FileChanges are the files changed so far (subagent.go).
	FileChanges
}

// Validate reports the problems of the input in one line.
func (in PromptInput) Validate() error { return in.problems().invalid("prompt") }

// problems are the input's problems, each in a few words.
func (in PromptInput) problems() problems {
	var p problems
	p.add(strings.TrimSpace(in.SessionID) == "", "sessionId is empty")
	p.add(strings.TrimSpace(in.Message) == "", "message is empty")
	p.add(in.Model.Provider == "", "model.provider is empty")
	p.addErr(CheckImages(in.Images))
	p.addErr(in.Retry.Validate())
	p.addErr(in.Compaction.Validate())
	p.add(min(in.ModelTimeoutMs, in.HeartbeatTimeoutMs, in.Tools.BashTimeoutMs) < 0, "timeouts must be >= 0")
	p.add(in.Agent.MaxTurns < 0 || in.Agent.ContinueAsNewEvents < 0, "agent.maxTurns and agent.continueAsNewEvents must be >= 0")
	s := in.Agent.SubAgents
	p.add(s.MaxConcurrent < 0 || s.MaxDepth < 0 || s.MaxTotal < 0, "agent.subagents.maxConcurrent, maxDepth and maxTotal must be >= 0")
	for _, m := range []struct{ key, v string }{
		{"agent.steeringMode", in.Agent.SteeringMode}, {"agent.followUpMode", in.Agent.FollowUpMode},
	} {
		p.add(m.v != "" && m.v != agent.QueueModeAll && m.v != agent.QueueModeOneAtATime,
			fmt.Sprintf("%s is %q, want %s or %s", m.key, m.v, agent.QueueModeOneAtATime, agent.QueueModeAll))
	}
	p.addErr(in.Budget.Validate())
	// A limit in dollars on a model without a price would never stop.
	id := in.Model.Provider + "/" + in.Model.Name
	p.add(in.Model.Cost == nil && (in.Budget.MaxCostUsd > 0 || in.Budget.SessionMaxCostUsd > 0),
		fmt.Sprintf("a budget in US dollars needs a price for %s, which has none: add model.prices %s=input,output[,cacheRead[,cacheWrite]] (dollars per million tokens)", id, id))
	p.add(in.Approval.ApprovalTimeoutMs < 0, "tools.approvalTimeoutMs must be >= 0")
	_, err := toolpolicy.Compile(in.Approval.RequireApproval, in.Approval.Policy)
	p.addErr(err)
	return p
}

// problems are a workflow input's problems, each in a few words: the
// one validation of every workflow's input.
type problems []string

// add notes problem when bad is true.
func (p *problems) add(bad bool, problem string) {
	if bad {
		*p = append(*p, problem)
	}
}

// addErr notes err's text when err is not nil.
func (p *problems) addErr(err error) { p.add(err != nil, fmt.Sprint(err)) }

// invalid is the one-line error of a workflow input with problems (nil
// when it has none).
func (p problems) invalid(what string) error {
	if len(p) == 0 {
		return nil
	}
	return fmt.Errorf("invalid %s input: %s", what, strings.Join(p, "; "))
}

// PromptResult is the result of a prompt. A completed prompt returns it;
// a failed one returns an ApplicationError of type ErrTypePromptFailed,
// an aborted or cancelled one a CanceledError, whose details hold it.
type PromptResult struct {
	// Status is agent.StatusCompleted, StatusFailed or StatusAborted.
	Status string `json:"status"`
	// Error is the final error of a failed prompt.
	Error string `json:"error,omitempty"`
	// Text is the final assistant text of a completed prompt.
	Text string `json:"text,omitempty"`
	// LeafID is the session entry the conversation ends at.
	LeafID string `json:"leafId"`
	// Events is the number of events the prompt emitted.
	Events int64 `json:"events"`
	// LastEvents are the run's last events, as many as fit in one events
	// page (agent.EventsPageBytes, the bound of the history this adds):
	// a follower reads a closed prompt's last events here, with no worker
	// to answer a query (internal/client).
	LastEvents []agent.Event `json:"lastEvents,omitempty"`
	// Undelivered holds the texts of the steer and follow_up messages
	// still queued when the prompt ended (failed, aborted, its retry
	// cancelled; a completed prompt delivers them all), so a client can
	// send them again; UndeliveredMessages holds them with their kind
	// and reason (as its prompt_end event does).
	Undelivered         []string                   `json:"undelivered,omitempty"`
	UndeliveredMessages []agent.UndeliveredMessage `json:"undeliveredMessages,omitempty"`
	// Usage is what the prompt's model calls spent, its sub-agents'
	// included; Turns and ToolCalls count its turns and tool calls (a
	// sub-agent's account to its parent).
	Usage     *agent.Spend `json:"usage,omitempty"`
	Turns     int          `json:"turns,omitempty"`
	ToolCalls int          `json:"toolCalls,omitempty"`
	FileChanges
	// Worktree is where the branch of a --worktree session stands as the
	// prompt ends (as on its prompt_end event); nil for other sessions.
	Worktree *agent.BranchSummary `json:"worktree,omitempty"`
}

// FileChanges are the files a prompt changed (subagent.go).
type FileChanges struct {
	// FilesChanged are the paths the prompt's successful write and edit
	// calls changed in its workspace, its sub-agents' in the same
	// workspace included, in order of first change, at most
	// MaxFilesChanged; FilesChangedMore counts the changes past them.
	// In a sub-agent working in its parent's workspace, the files that
	// changed while its bash commands ran are among them (FilesByBash),
	// or FilesBashNote says why they are not known.
	FilesChanged     []string `json:"filesChanged,omitempty"`
	FilesChangedMore int      `json:"filesChangedMore,omitempty"`
	FilesByBash      bool     `json:"filesByBash,omitempty"`
	FilesBashNote    string   `json:"filesBashNote,omitempty"`
}
