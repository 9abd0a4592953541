package schedule

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/workflows"
)

// Info describes a schedule (Describe): its spec, state, counts, recent
// and next runs.
type Info struct {
	ID string `json:"id"`
	// When is the schedule's spec in words: `cron "0 3 * * *"`, "every 6h0m0s".
	When          string `json:"when"`
	Paused        bool   `json:"paused"`
	Note          string `json:"note,omitempty"`
	Overlap       string `json:"overlap"`
	CatchupWindow string `json:"catchupWindow"`
	// SessionPrefix or SessionID (from the action's input; empty when it
	// cannot be read, e.g. an action edited into another workflow).
	SessionPrefix string `json:"sessionPrefix,omitempty"`
	SessionID     string `json:"sessionId,omitempty"`
	Prompt        string `json:"prompt,omitempty"`
	// Worktree: each run's session works in a git worktree of its own
	// (starter schedule create --worktree).
	Worktree bool `json:"worktree,omitempty"`
	// Actions is how many runs the schedule started; SkippedOverlap how
	// many it skipped because a run was still going (overlap skip);
	// MissedCatchup how many it dropped as older than the catch-up window.
	Actions        int         `json:"actions"`
	SkippedOverlap int         `json:"skippedOverlap"`
	MissedCatchup  int         `json:"missedCatchup"`
	Running        []string    `json:"running,omitempty"`
	Recent         []RecentRun `json:"recent,omitempty"`
	Next           []time.Time `json:"next,omitempty"`
}

// RecentRun is a run the schedule started.
type RecentRun struct {
	ScheduledAt time.Time `json:"scheduledAt"`
	StartedAt   time.Time `json:"startedAt"`
	WorkflowID  string    `json:"workflowId"`
	RunID       string    `json:"runId,omitempty"`
	// Status is the ScheduledPrompt's outcome: running, completed,
	// failed, aborted, skipped (its session was busy), or the workflow's
	// status (terminated, timed out, ...).
	Status    string `json:"status,omitempty"`
	SessionID string `json:"sessionId,omitempty"`
}

// ListEntry is a schedule in List.
type ListEntry struct {
	ID     string     `json:"id"`
	When   string     `json:"when"`
	Paused bool       `json:"paused"`
	Note   string     `json:"note,omitempty"`
	Next   *time.Time `json:"next,omitempty"`
}

// List lists the namespace's schedules of scheduled prompts (others, of
// other workflow types, are left out). The list is read from Temporal's
// visibility store: a schedule just created may take a moment to show.
func (m *Manager) List(ctx context.Context) ([]ListEntry, error) {
	it, err := m.Client.ScheduleClient().List(ctx, client.ScheduleListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list schedules: %w", err)
	}
	var out []ListEntry
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("list schedules: %w", err)
		}
		if e.WorkflowType.Name != workflows.ScheduledPromptWorkflowName {
			continue
		}
		le := ListEntry{ID: e.ID, When: m.when(e.Memo, e.Spec), Paused: e.Paused, Note: e.Note}
		if len(e.NextActionTimes) > 0 {
			t := e.NextActionTimes[0]
			le.Next = &t
		}
		out = append(out, le)
	}
	return out, nil
}

// Describe describes the schedule id, with the outcome of its recent runs.
func (m *Manager) Describe(ctx context.Context, id string) (Info, error) {
	var d *client.ScheduleDescription
	if err := m.handle(ctx, id, "describe", func(h client.ScheduleHandle) (err error) {
		d, err = h.Describe(ctx)
		return err
	}); err != nil {
		return Info{}, err
	}
	info := Info{ID: id, When: m.when(d.Memo, d.Schedule.Spec), Actions: d.Info.NumActions,
		SkippedOverlap: d.Info.NumActionsSkippedOverlap, MissedCatchup: d.Info.NumActionsMissedCatchupWindow,
		Next: d.Info.NextActionTimes}
	if st := d.Schedule.State; st != nil {
		info.Paused, info.Note = st.Paused, st.Note
	}
	if p := d.Schedule.Policy; p != nil {
		info.Overlap, info.CatchupWindow = OverlapName(p.Overlap), p.CatchupWindow.String()
	}
	if a, ok := d.Schedule.Action.(*client.ScheduleWorkflowAction); ok && len(a.Args) == 1 {
		if in, ok := m.decodeInput(a.Args[0]); ok {
			info.SessionPrefix, info.SessionID, info.Prompt = in.SessionPrefix, in.SessionID, in.Prompt.Message
			info.Worktree = in.Prompt.Worktree != ""
		}
	}
	for _, r := range d.Info.RunningWorkflows {
		info.Running = append(info.Running, r.WorkflowID)
	}
	for _, a := range d.Info.RecentActions {
		r := RecentRun{ScheduledAt: a.ScheduleTime, StartedAt: a.ActualTime}
		if w := a.StartWorkflowResult; w != nil {
			r.WorkflowID, r.RunID = w.WorkflowID, w.FirstExecutionRunID
			r.Status, r.SessionID = m.outcome(ctx, w.WorkflowID, w.FirstExecutionRunID)
		}
		info.Recent = append(info.Recent, r)
	}
	return info, nil
}

// outcome is the status and session of a run: its result when it
// completed, else its workflow status ("" when it cannot be read).
func (m *Manager) outcome(ctx context.Context, workflowID, runID string) (status, sessionID string) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	d, err := m.Client.DescribeWorkflowExecution(cctx, workflowID, runID)
	if err != nil {
		return "", ""
	}
	st := d.GetWorkflowExecutionInfo().GetStatus()
	switch st {
	case enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return "running", ""
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		var res workflows.ScheduledPromptResult
		err := m.Client.GetWorkflow(cctx, workflowID, runID).Get(cctx, &res)
		var appErr *temporal.ApplicationError
		if err != nil && errors.As(err, &appErr) {
			_ = appErr.Details(&res)
		}
		if res.Status != "" {
			return res.Status, res.SessionID
		}
	}
	return kebab(enumspb.WorkflowExecutionStatus_name[int32(st)], "WORKFLOW_EXECUTION_STATUS_"), ""
}

// when is the schedule's spec in words: as created (memo MemoWhen; the
// server keeps a cron expression as calendar specs), else from spec.
func (m *Manager) when(memo *commonpb.Memo, spec *client.ScheduleSpec) string {
	if w := when(spec); strings.HasPrefix(w, cronPrefix) {
		return w // the expression as given, kept in its calendar's comment
	}
	if p := memo.GetFields()[MemoWhen]; p != nil {
		var w string
		if m.converter().FromPayload(p, &w) == nil && w != "" && memoFits(w, spec) {
			return w
		}
	}
	return when(spec)
}

// cronPrefix starts the words of a cron spec (WhenOf).
const cronPrefix = `cron "`

// memoFits reports whether the memo's words w (as created) still
// describe spec: an update cannot change the memo.
func memoFits(w string, s *client.ScheduleSpec) bool {
	switch {
	case s == nil:
		return true
	case len(s.Calendars) > 0:
		return strings.HasPrefix(w, cronPrefix) && !strings.HasPrefix(w, cronPrefix+"@every")
	case len(s.Intervals) == 0:
		return true
	}
	d, ok := strings.CutPrefix(w, "every ")
	if !ok {
		d, ok = strings.CutPrefix(w, cronPrefix+"@every ")
		d = strings.TrimSuffix(d, `"`)
	}
	v, err := time.ParseDuration(strings.TrimSpace(d))
	return ok && err == nil && v == s.Intervals[0].Every
}

func (m *Manager) converter() converter.DataConverter {
	return cmp.Or(m.DataConverter, converter.GetDefaultDataConverter())
}

// decodeInput reads the action's input, a payload on Describe.
func (m *Manager) decodeInput(arg any) (workflows.ScheduledPromptInput, bool) {
	var in workflows.ScheduledPromptInput
	p, ok := arg.(*commonpb.Payload)
	if !ok {
		return in, false
	}
	return in, m.converter().FromPayload(p, &in) == nil
}

// when is a schedule spec in words (cron, every).
func when(s *client.ScheduleSpec) string {
	switch {
	case s == nil:
		return ""
	case len(s.CronExpressions) > 0:
		return fmt.Sprintf("cron %q", s.CronExpressions[0])
	case len(s.Calendars) > 0 && strings.HasPrefix(s.Calendars[0].Comment, cronPrefix):
		return s.Calendars[0].Comment
	case len(s.Intervals) > 0:
		return "every " + s.Intervals[0].Every.String()
	case len(s.Calendars) > 0:
		return fmt.Sprintf("%d calendar specs", len(s.Calendars))
	}
	return "no spec"
}
