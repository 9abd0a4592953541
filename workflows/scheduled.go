package workflows

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/session"
)

// ScheduledPromptWorkflowName is the registered name of the
// ScheduledPrompt workflow, the action of a schedule (starter schedule).
const ScheduledPromptWorkflowName = "ScheduledPrompt"

// ScheduledStatusSkipped is the status of a scheduled run that started no
// prompt: its session was busy (a prompt, a compaction, ... still runs
// under the session's workflow id).
const ScheduledStatusSkipped = "skipped"

// SessionTimeLayout formats a run's scheduled time (UTC) into the session
// id of a fresh-session schedule: prefix + "-" + time, e.g.
// nightly-20261204T030000Z. Seconds suffice: a schedule fires at most
// once a second.
const SessionTimeLayout = "20060102T150405Z"

// saScheduledStart is the search attribute a Temporal Schedule sets on
// the workflows it starts: the run's nominal (scheduled) time.
var saScheduledStart = temporal.NewSearchAttributeKeyTime("TemporalScheduledStartTime")

// ScheduledPromptInput is the input of the ScheduledPrompt workflow: the
// prompt (built as `starter prompt` builds it, without a session id) and
// where it runs: a fresh session per run (SessionPrefix) or one named
// session (SessionID); exactly one is set.
type ScheduledPromptInput struct {
	ScheduleID    string      `json:"scheduleId"`
	SessionPrefix string      `json:"sessionPrefix,omitempty"`
	SessionID     string      `json:"sessionId,omitempty"`
	Prompt        PromptInput `json:"prompt"`
}

// Validate reports the problems of the input in one line.
func (in ScheduledPromptInput) Validate() error {
	var p problems
	switch {
	case (in.SessionPrefix == "") == (in.SessionID == ""):
		p.add(true, "give a session prefix or a session id, not both or neither")
	case in.SessionID != "":
		p.addErr(session.ValidateID(in.SessionID))
	default:
		if err := session.ValidateID(SessionAt(in.SessionPrefix, time.Unix(0, 0))); err != nil {
			p.add(true, fmt.Sprintf("session prefix %q: %v", in.SessionPrefix, err))
		}
	}
	pr := in.Prompt
	pr.SessionID = "scheduled" // set by the workflow at each run
	return append(p, pr.problems()...).invalid("scheduled prompt")
}

// SessionAt is the session id of a fresh-session schedule's run scheduled
// at t.
func SessionAt(prefix string, t time.Time) string {
	return prefix + "-" + t.UTC().Format(SessionTimeLayout)
}

// ScheduledPromptResult is what a scheduled run did.
type ScheduledPromptResult struct {
	// SessionID is the session the run's prompt ran in (or would have).
	SessionID string `json:"sessionId"`
	// Status is the prompt's (agent.StatusCompleted, StatusFailed,
	// StatusAborted) or ScheduledStatusSkipped.
	Status string `json:"status"`
	// Reason says why a run was skipped.
	Reason string `json:"reason,omitempty"`
	// Prompt is the prompt's result (nil when skipped).
	Prompt *PromptResult `json:"prompt,omitempty"`
}

// ScheduledPrompt runs one firing of a schedule (docs/spec.md 16): the
// prompt as a child under its session's workflow id (a schedule's own
// action would get a timestamp appended to its id). A busy session gives
// a skipped result; a prompt that fails or is aborted fails this workflow
// with the prompt's error type and this result in its details.
func ScheduledPrompt(ctx workflow.Context, in ScheduledPromptInput) (ScheduledPromptResult, error) {
	if err := in.Validate(); err != nil {
		return ScheduledPromptResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
	}
	sessionID := cmp.Or(in.SessionID, SessionAt(in.SessionPrefix, scheduledTime(ctx)))
	res := ScheduledPromptResult{SessionID: sessionID}
	p := in.Prompt
	p.SessionID = sessionID
	// Nobody waits at a terminal for it: its model calls give way to
	// interactive prompts' (priority.go).
	p.Origin = OriginScheduled
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            WorkflowID(sessionID),
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		// Cancelling (or terminating) the scheduled run aborts its
		// prompt, which records the abort in its session.
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		StaticSummary:     "scheduled prompt (" + in.ScheduleID + "): " + firstLine(p.Message, 201),
		Memo:              map[string]any{"sessionId": sessionID, "model": p.Model.Provider + "/" + p.Model.Name, "scheduleId": in.ScheduleID},
	})
	child := workflow.ExecuteChildWorkflow(cctx, PromptWorkflowName, p)
	if err := child.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		if temporal.IsWorkflowExecutionAlreadyStartedError(err) {
			res.Status = ScheduledStatusSkipped
			res.Reason = fmt.Sprintf("session %s is busy: workflow %s is still running", sessionID, WorkflowID(sessionID))
			workflow.GetLogger(ctx).Info("scheduled prompt skipped", "schedule", in.ScheduleID, "reason", res.Reason)
			return res, nil
		}
		return res, fmt.Errorf("start prompt in session %s: %w", sessionID, err)
	}
	var pr PromptResult
	err := child.Get(ctx, &pr)
	if err == nil {
		res.Status, res.Prompt = pr.Status, &pr
		return res, nil
	}
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.HasDetails() && appErr.Details(&pr) == nil {
		res.Status, res.Prompt = pr.Status, &pr
		return res, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("scheduled prompt in session %s %s: %s", sessionID, pr.Status, firstLine(pr.Error, 501)), appErr.Type(), nil, res)
	}
	res.Status = agent.StatusFailed
	return res, temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("scheduled prompt in session %s: %s", sessionID, rootMessage(err)), ErrTypePromptFailed, nil, res)
}

// scheduledTime is the run's scheduled time: the search attribute a
// schedule sets (a manual trigger sets it to the trigger's time), or the
// workflow's start time for a run started some other way. Both are in
// the start event, so a replay derives the same session id.
func scheduledTime(ctx workflow.Context) time.Time {
	if t, ok := workflow.GetTypedSearchAttributes(ctx).GetTime(saScheduledStart); ok && !t.IsZero() {
		return t
	}
	return workflow.GetInfo(ctx).WorkflowStartTime
}

// firstLine is s up to its first line break, at most n runes (line.Cut).
func firstLine(s string, n int) string { return line.Cut(line.First(strings.TrimSpace(s)), n) }
