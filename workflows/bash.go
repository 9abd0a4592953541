package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/tools"
	"github.com/durableagent/durableagent/retry"
)

// BashWorkflowName is the registered name of the Bash workflow.
const BashWorkflowName = "Bash"

// ErrTypeBashFailed is the error type of a Bash workflow whose command
// could not be run or recorded (details hold the BashResult).
const ErrTypeBashFailed = "BashFailed"

// BashInput is the input of the Bash workflow: a command the user runs in
// a session's workspace (RPC bash).
type BashInput struct {
	SessionID string `json:"sessionId"`
	Command   string `json:"command"`
	// Workspace is the directory a new session is created with; an
	// existing session keeps its own.
	Workspace string `json:"workspace,omitempty"`
	// TimeoutMs bounds the command (tools.bashTimeoutMs; 0: none).
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// HostWaitMs is how long the command waits for the session's tool
	// host (tools.hostWaitMs; 0: DefaultHostWait).
	HostWaitMs         int64 `json:"hostWaitMs,omitempty"`
	HeartbeatTimeoutMs int64 `json:"heartbeatTimeoutMs,omitempty"`
	// ExcludeFromContext records the command with its output but keeps
	// it out of what the model is sent (RPC bash excludeFromContext).
	ExcludeFromContext bool `json:"excludeFromContext,omitempty"`
}

// Validate reports the problems of the input in one line.
func (in BashInput) Validate() error {
	var p problems
	p.add(strings.TrimSpace(in.SessionID) == "", "sessionId is empty")
	p.add(strings.TrimSpace(in.Command) == "", "command is empty")
	p.add(in.TimeoutMs < 0 || in.HostWaitMs < 0 || in.HeartbeatTimeoutMs < 0, "timeouts must be >= 0")
	return p.invalid("bash")
}

// BashResult is the result of the Bash workflow: the bashExecution entry
// written (its output is there) and what became of the command.
type BashResult struct {
	// Status is agent.StatusCompleted (the command ran, whatever its exit
	// code, or was cancelled by abort_bash) or agent.StatusFailed.
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	activities.UserBashResult
	// LastEvents are the run's last events, as PromptResult.LastEvents:
	// where a client reads a finished command's events.
	LastEvents []agent.Event `json:"lastEvents,omitempty"`
}

// Bash runs a command the user typed (RPC bash) as the UserBash activity
// on the session's tool host and records it as a bashExecution message,
// under the session's workflow id, serving a prompt's queries and signals
// (abort stops the command, recorded as cancelled) and ending its events
// with prompt_end.
func Bash(ctx workflow.Context, in BashInput) (BashResult, error) {
	if err := in.Validate(); err != nil {
		return BashResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
	}
	r := newRun(ctx, PromptInput{SessionID: in.SessionID, Retry: retry.DefaultSettings(), HeartbeatTimeoutMs: in.HeartbeatTimeoutMs})
	if err := r.registerHandlers(ctx); err != nil {
		return BashResult{}, err
	}
	r.startSignalPump(ctx)

	var b activities.BeginPromptResult
	err := workflow.ExecuteLocalActivity(localOptions(ctx), activities.BeginPromptName, activities.BeginPromptInput{
		SessionID: in.SessionID, Workspace: in.Workspace, NeedWorkspace: true,
	}).Get(ctx, &b)
	if err != nil {
		return r.endBash(ctx, BashResult{Status: agent.StatusFailed, Error: fmt.Sprintf("bash in session %s: %s", in.SessionID, rootMessage(err))})
	}
	r.LeafID, r.MessageCount, r.Workspace, r.ToolHost = b.LeafID, b.MessageCount, b.Workspace, b.ToolHost

	entryID := r.newID()
	actx, cancel := workflow.WithCancel(userBashOptions(ctx, in, r.ToolHost, entryID))
	r.cancelTools = cancel
	r.runningTools = []string{tools.Bash + " " + line.Cut(in.Command, 60)}
	workflow.SetCurrentDetails(ctx, "Running user command: "+line.Cut(in.Command, 200))
	var res activities.UserBashResult
	err = workflow.ExecuteActivity(actx, activities.UserBashName, activities.UserBashInput{
		SessionID: in.SessionID, EntryID: entryID, ParentID: r.LeafID, Command: in.Command,
		Workspace: r.Workspace, TimeoutMs: in.TimeoutMs, ExcludeFromContext: in.ExcludeFromContext,
	}).Get(ctx, &res)
	r.cancelTools, r.runningTools = nil, nil
	cancel()
	workflow.SetCurrentDetails(ctx, "")
	if err == nil {
		r.advance(entryID)
		return r.endBash(ctx, BashResult{Status: agent.StatusCompleted, UserBashResult: res})
	}
	cut, detail := cutOf(ctx, err)
	if cut == cutAborted || r.aborted {
		// abort_bash: the activity recorded the output so far as
		// cancelled; if it never started (no worker took it), this
		// record says the command was cancelled (the first write of an
		// id wins, so the activity's record stays).
		msg := agent.Message{Role: agent.RoleBashExecution, Command: in.Command, Cancelled: true,
			ExcludeFromContext: in.ExcludeFromContext}
		if _, rerr := r.record(ctx, entryID, r.LeafID, msg); rerr != nil {
			return r.endBash(ctx, BashResult{Status: agent.StatusFailed, Error: rerr.Error()})
		}
		r.advance(entryID)
		return r.endBash(ctx, BashResult{Status: agent.StatusCompleted,
			UserBashResult: activities.UserBashResult{EntryID: entryID, Cancelled: true}})
	}
	if cut != cutFailed { // a cut command may or may not have completed
		detail = toolCutText(cut, detail, true)
	}
	return r.endBash(ctx, BashResult{Status: agent.StatusFailed, Error: fmt.Sprintf("bash %q: %s", in.Command, detail)})
}

// endBash emits prompt_end and returns res, as an error when it failed.
func (r *run) endBash(ctx workflow.Context, res BashResult) (BashResult, error) {
	r.status = res.Status
	r.emit(ctx, agent.Event{Type: agent.EventPromptEnd, Status: res.Status, ErrorMessage: res.Error})
	res.LastEvents = r.lastEvents()
	if res.Status == agent.StatusFailed {
		return res, temporal.NewNonRetryableApplicationError(res.Error, ErrTypeBashFailed, nil, res)
	}
	return res, nil
}
