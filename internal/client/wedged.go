package client

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/workflows"
)

// maxFailureChars bounds WedgedTask.Failure (in runes).
const maxFailureChars = 300

// historyTimeout bounds the read of a run's history by Wedged.
const historyTimeout = 30 * time.Second

// WedgedTask describes a running workflow whose workflow task keeps
// failing.
type WedgedTask struct {
	WorkflowID string
	RunID      string
	// Attempt is the pending workflow task's attempt (2 or more).
	Attempt int32
	// Failure is the message of the latest WorkflowTaskFailed event
	// (one line, bounded).
	Failure string
}

// Wedged reports the session's running workflow when its workflow task
// keeps failing: the pending workflow task is on its second attempt or
// later and the latest workflow task event in its history is a
// WorkflowTaskFailed (a task that timed out, its worker lost, is retried
// and processes signals once a worker takes it: not wedged). nil when
// the workflow is healthy; ErrNoRunningPrompt when none runs.
func (k *Controller) Wedged(ctx context.Context, sessionID string) (*WedgedTask, error) {
	id := workflows.WorkflowID(sessionID)
	resp, err := k.describe(ctx, id, "")
	info := resp.GetWorkflowExecutionInfo()
	switch {
	case isNotFound(err) || err == nil && info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return nil, fmt.Errorf("%w in session %s", ErrNoRunningPrompt, sessionID)
	case err != nil:
		return nil, fmt.Errorf("describe the workflow of session %s: %w", sessionID, err)
	}
	attempt := resp.GetPendingWorkflowTask().GetAttempt()
	if attempt < 2 {
		return nil, nil
	}
	w := &WedgedTask{WorkflowID: id, RunID: info.GetExecution().GetRunId(), Attempt: attempt}
	hctx, hcancel := context.WithTimeout(ctx, historyTimeout)
	defer hcancel()
	failed, err := k.latestWorkflowTaskFailure(hctx, id, w.RunID)
	if err != nil {
		return nil, fmt.Errorf("read the history of session %s: %w", sessionID, err)
	}
	if failed == nil {
		return nil, nil
	}
	w.Failure = cmp.Or(line.Cut(line.First(failed.GetFailure().GetMessage()), maxFailureChars),
		strings.ToLower(strings.TrimPrefix(failed.GetCause().String(), "WORKFLOW_TASK_FAILED_CAUSE_")))
	return w, nil
}

// latestWorkflowTaskFailure is the attributes of the run's latest event
// that ends a workflow task, if it is a failure (nil if it is a
// completion or a timeout). The failing attempts after the first write no
// events, so the history stays as long as it was.
func (k *Controller) latestWorkflowTaskFailure(ctx context.Context, workflowID, runID string) (*historypb.WorkflowTaskFailedEventAttributes, error) {
	it := k.Client.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var last *historypb.WorkflowTaskFailedEventAttributes
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, err
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED:
			last = ev.GetWorkflowTaskFailedEventAttributes()
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
			last = nil
		}
	}
	return last, nil
}

// TerminateWedged terminates a workflow whose workflow task keeps failing
// (Wedged), recording why in the termination reason.
func (k *Controller) TerminateWedged(ctx context.Context, w *WedgedTask) error {
	reason := fmt.Sprintf("starter abort --terminate: the workflow task failed on %d attempts and could not process the abort: %s",
		w.Attempt, w.Failure)
	if err := k.Client.TerminateWorkflow(ctx, w.WorkflowID, w.RunID, reason); err != nil {
		return fmt.Errorf("terminate workflow %s: %w", w.WorkflowID, err)
	}
	return nil
}
