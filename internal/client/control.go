package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/codec"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

// ErrSessionBusy: the session already runs a prompt.
var ErrSessionBusy = errors.New("session busy")

// ErrNoRunningPrompt: the session has no running prompt to signal.
var ErrNoRunningPrompt = errors.New("no running prompt")

// ErrNoPrompt: the session never ran a prompt.
var ErrNoPrompt = errors.New("no prompt")

// Controller drives prompts on one Temporal namespace and task queue.
type Controller struct {
	Client    client.Client
	TaskQueue string
	// DataConverter decodes the heartbeat details of running activities
	// (nil: converter.GetDefaultDataConverter()). A client dialled with a
	// payload codec (internal/codec) must pass the same converter here,
	// or live output cannot be decrypted (and is skipped).
	DataConverter converter.DataConverter
	// OnWait, when set, is told (once each) when Follow starts waiting for
	// a worker or for Temporal, and when it resumes.
	OnWait func(msg string)
	// QueryTimeout bounds one events query (0: DefaultQueryTimeout); a
	// query that runs out doubles it for the next try, up to 15 s.
	QueryTimeout time.Duration

	// poll and status replace pollInterval and statusInterval in the
	// package's tests (0: those).
	poll, status time.Duration
}

// StartPrompt starts the prompt workflow of in.SessionID. A session runs
// one prompt at a time: a second one fails with ErrSessionBusy.
func (k *Controller) StartPrompt(ctx context.Context, in workflows.PromptInput) (client.WorkflowRun, error) {
	if err := k.checkPayloadSize("prompt", len(in.Message), in); err != nil {
		return nil, err
	}
	memo := map[string]any{
		"sessionId": in.SessionID,
		"model":     in.Model.Provider + "/" + in.Model.Name,
	}
	return k.startSessionWorkflow(ctx, in.SessionID, Summary("prompt: ", in.Message), "prompt in", workflows.PromptWorkflowName, in, memo)
}

// startSessionWorkflow starts a workflow under the session's workflow id
// (its input validated first), with its static summary and memo: one at
// a time per session, a finished one may be followed by a new one; a
// running one makes it fail with ErrSessionBusy. what names the start in
// errors ("prompt in", "compaction of").
func (k *Controller) startSessionWorkflow(ctx context.Context, sessionID, summary, what, workflowName string, in interface{ Validate() error }, memo map[string]any) (client.WorkflowRun, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	opts := client.StartWorkflowOptions{
		ID:                       workflows.WorkflowID(sessionID),
		TaskQueue:                k.TaskQueue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		// Without this the SDK hands back the running workflow's run
		// instead of the conflict, and a second prompt (or a compaction)
		// would silently follow the running prompt.
		WorkflowExecutionErrorWhenAlreadyStarted: true,
		StaticSummary:                            summary,
		Memo:                                     memo,
	}
	run, err := k.Client.ExecuteWorkflow(ctx, opts, workflowName, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil, fmt.Errorf("%w: session %s is running %s (workflow %s); wait for it or abort it",
			ErrSessionBusy, sessionID, k.runningWhat(ctx, opts.ID, started.RunId), opts.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("start %s session %s: %w", what, sessionID, err)
	}
	return run, nil
}

// sessionWorkflowWhat names what a workflow under a session's workflow id
// does, by its type.
var sessionWorkflowWhat = map[string]string{
	workflows.PromptWorkflowName: "a prompt", workflows.CompactWorkflowName: "a compaction",
	workflows.BashWorkflowName: "a bash command", workflows.DeleteSessionWorkflowName: "a deletion",
	workflows.SessionWriteWorkflowName: "a session write",
}

// runningWhat names what the session's running workflow does (a prompt,
// a compaction, a bash command), read from its type.
func (k *Controller) runningWhat(ctx context.Context, workflowID, runID string) string {
	resp, err := k.describe(ctx, workflowID, runID)
	if err != nil {
		return "a prompt, a compaction or a bash command"
	}
	name := resp.GetWorkflowExecutionInfo().GetType().GetName()
	return cmp.Or(sessionWorkflowWhat[name], "workflow type "+name)
}

// Compact runs the Compact workflow of in.SessionID (a manual compaction
// outside a prompt) under the session's workflow id, so it cannot race a
// prompt: a running one makes it fail with ErrSessionBusy; abort reaches
// it like a prompt. It waits for the result: a compaction that failed or
// was aborted returns its CompactResult (Status set) along with an
// error; an error with an empty Status means no result arrived (ctx
// ended, the workflow was terminated, Temporal failed), and the
// compaction keeps running in Temporal when ctx ended. While it waits,
// the summary call's auto_retry_start and auto_retry_end events go to
// onRetry (nil: none), so a compaction that waits out a 503 or a usage
// limit is not silent and its waiter has the cue for abort_retry; events
// that cannot be read are not an error (the result tells what happened).
func (k *Controller) Compact(ctx context.Context, in workflows.CompactInput, onRetry func(agent.Event)) (workflows.CompactResult, error) {
	run, err := k.startSessionWorkflow(ctx, in.SessionID, "compact session "+in.SessionID, "compaction of", workflows.CompactWorkflowName, in, nil)
	if err != nil {
		return workflows.CompactResult{}, err
	}
	if onRetry != nil {
		defer k.followAside(ctx, in.SessionID, run.GetRunID(), func(e agent.Event) {
			if e.Type == agent.EventAutoRetryStart || e.Type == agent.EventAutoRetryEnd {
				onRetry(e)
			}
		})()
	}
	res, err := runResult[workflows.CompactResult](ctx, run)
	switch {
	case err == nil:
		return res, nil
	case res.Status != "":
		return res, fmt.Errorf("compaction of session %s %s: %s", in.SessionID, res.Status, res.Error)
	}
	return workflows.CompactResult{}, fmt.Errorf("compaction of session %s: %w", in.SessionID, err)
}

// runResult waits for run's result. A workflow that failed (or was
// aborted by a signal) carries its result in its ApplicationError's
// details, one cancelled through Temporal in its CanceledError's: on
// error, res is what those details hold (zero when none decode).
func runResult[T any](ctx context.Context, run client.WorkflowRun) (res T, err error) {
	if err = run.Get(ctx, &res); err == nil {
		return res, nil
	}
	res = *new(T)
	var appErr *temporal.ApplicationError
	var canErr *temporal.CanceledError
	switch {
	case errors.As(err, &appErr) && appErr.HasDetails():
		_ = appErr.Details(&res)
	case errors.As(err, &canErr) && canErr.HasDetails():
		_ = canErr.Details(&res)
	}
	return res, err
}

// AbortRetry sends abort_retry to the session's running prompt.
func (k *Controller) AbortRetry(ctx context.Context, sessionID string) error {
	return k.signal(ctx, sessionID, agent.SignalAbortRetry, nil)
}

// Abort sends abort to the session's running prompt.
func (k *Controller) Abort(ctx context.Context, sessionID string) error {
	return k.signal(ctx, sessionID, agent.SignalAbort, nil)
}

// SetAutoRetry sends set_auto_retry to the session's running prompt.
func (k *Controller) SetAutoRetry(ctx context.Context, sessionID string, enabled bool) error {
	return k.signal(ctx, sessionID, agent.SignalSetAutoRetry, agent.SetAutoRetryPayload{Enabled: enabled})
}

// Steer sends steer to the session's running prompt: the message is
// delivered after the current tool batch.
func (k *Controller) Steer(ctx context.Context, sessionID, message string, images ...agent.ContentBlock) error {
	return k.Send(ctx, sessionID, agent.SignalSteer, message, images...)
}

// FollowUp sends follow_up to the session's running prompt: the message
// is delivered when the loop would otherwise end.
func (k *Controller) FollowUp(ctx context.Context, sessionID, message string, images ...agent.ContentBlock) error {
	return k.Send(ctx, sessionID, agent.SignalFollowUp, message, images...)
}

// Send sends message as the user message signal agent.SignalSteer (Steer)
// or agent.SignalFollowUp (FollowUp), its payload fitting in a Temporal
// payload, its images the rules of a prompt's.
func (k *Controller) Send(ctx context.Context, sessionID, signal, message string, images ...agent.ContentBlock) error {
	if signal != agent.SignalSteer && signal != agent.SignalFollowUp {
		return fmt.Errorf("user message kind %q: want %s or %s", signal, agent.SignalSteer, agent.SignalFollowUp)
	}
	if err := workflows.CheckImages(images); err != nil {
		return fmt.Errorf("%s: %w", signal, err)
	}
	p := agent.UserMessagePayload{Message: message, Images: images, SentAt: time.Now().UTC()}
	if err := k.checkPayloadSize(signal, len(message), p); err != nil {
		return err
	}
	return k.signal(ctx, sessionID, signal, p)
}

// ApproveTool decides a tool call waiting for approval with the
// approve_tool update; the workflow's validator rejects unknown and
// already-decided ids (the error names the problem). A reason longer than
// agent.MaxApprovalReasonBytes is cut, with a note, before it is sent:
// history records the update as sent.
func (k *Controller) ApproveTool(ctx context.Context, sessionID string, p agent.ApproveToolPayload) error {
	p = p.Bounded()
	err := k.update(ctx, sessionID, agent.UpdateApproveTool, p, nil)
	if err != nil && !errors.Is(err, ErrNoRunningPrompt) {
		return fmt.Errorf("approve_tool %s in session %s: %w", p.ToolCallID, sessionID, err)
	}
	return err
}

// update sends an update to the session's running prompt and waits for
// its result (out; nil: none).
func (k *Controller) update(ctx context.Context, sessionID, name string, arg, out any) error {
	h, err := k.Client.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: workflows.WorkflowID(sessionID), UpdateName: name, Args: []any{arg}, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		err = h.Get(ctx, out)
	}
	if isNotFound(err) {
		return fmt.Errorf("%w in session %s", ErrNoRunningPrompt, sessionID)
	}
	return err
}

func (k *Controller) signal(ctx context.Context, sessionID, name string, arg any) error {
	err := k.Client.SignalWorkflow(ctx, workflows.WorkflowID(sessionID), "", name, arg)
	if isNotFound(err) {
		return fmt.Errorf("%w in session %s", ErrNoRunningPrompt, sessionID)
	}
	if err != nil {
		return fmt.Errorf("signal %s to session %s: %w", name, sessionID, err)
	}
	return nil
}

// State queries the state of the session's latest prompt (running or
// finished). A run Temporal closed while the workflow's own state still
// says running (terminated, timed out, ...: the workflow never saw its
// end) is reported as Temporal has it: Status "terminated", "timed out",
// ..., nothing retrying, streaming or waiting.
func (k *Controller) State(ctx context.Context, sessionID string) (agent.State, error) {
	var st agent.State
	if err := k.query(ctx, sessionID, "", agent.QueryState, &st); err != nil {
		return st, err
	}
	if st.Status != agent.StatusRunning {
		return st, nil
	}
	status, _, err := k.RunStatus(ctx, sessionID, "")
	if err != nil || status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return st, nil
	}
	st.Status = StatusName(status)
	st.IsRetrying, st.PendingRetry = false, nil
	st.IsStreaming, st.IsCompacting = false, false
	st.RunningTools, st.WaitingForHost, st.PendingApprovals = nil, "", nil
	return st, nil
}

// RunStatus is Temporal's status of a run of the session's workflow
// (runID "": the latest) and that run's id.
func (k *Controller) RunStatus(ctx context.Context, sessionID, runID string) (enumspb.WorkflowExecutionStatus, string, error) {
	resp, err := k.describe(ctx, workflows.WorkflowID(sessionID), runID)
	if err != nil {
		return 0, "", err
	}
	info := resp.GetWorkflowExecutionInfo()
	return info.GetStatus(), info.GetExecution().GetRunId(), nil
}

// describe is DescribeWorkflowExecution bounded by describeTimeout.
func (k *Controller) describe(ctx context.Context, workflowID, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	cctx, cancel := context.WithTimeout(ctx, describeTimeout)
	defer cancel()
	return k.Client.DescribeWorkflowExecution(cctx, workflowID, runID)
}

// isNotFound: Temporal has no such workflow (or run).
func isNotFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}

// StatusName is a workflow status as State reports it, Temporal's name in
// lower case: "running", "completed", "terminated", "timed_out",
// "failed", "canceled", "continued_as_new".
func StatusName(s enumspb.WorkflowExecutionStatus) string {
	return strings.ToLower(strings.TrimPrefix(enumspb.WorkflowExecutionStatus_name[int32(s)], "WORKFLOW_EXECUTION_STATUS_"))
}

// Events returns the events after seq of a prompt (runID "" = latest),
// every page of the events query: it asks again after the last seq of a
// page that may have been cut (agent.PageMayContinue), up to prompt_end.
//
// A finished prompt's events are read from its result alone
// (PromptResult.LastEvents: its last page; none of a run closed without
// a result): a closed workflow answers the query only through a worker.
// docs/live.md says what is not read so. Spec 13.11.8.
func (k *Controller) Events(ctx context.Context, sessionID, runID string, after int64) ([]agent.Event, error) {
	d, err := k.describe(ctx, workflows.WorkflowID(sessionID), runID)
	if info := d.GetWorkflowExecutionInfo(); err == nil && finished(info.GetStatus()) {
		if info.GetType().GetName() == workflows.DeleteSessionWorkflowName {
			return nil, fmt.Errorf("%w %s: it was deleted", ErrUnknownSession, sessionID)
		}
		evs := []agent.Event{}
		if res := k.result(ctx, workflows.WorkflowID(sessionID), info.GetExecution().GetRunId()); res != nil {
			evs = append(evs, eventsAfter(res.LastEvents, after)...)
		}
		return evs, nil
	}
	all := []agent.Event{}
	for {
		var page []agent.Event
		if err := k.query(ctx, sessionID, runID, agent.QueryEvents, &page, after); err != nil {
			return all, err
		}
		all = append(all, page...)
		if !agent.PageMayContinue(page) || page[len(page)-1].Type == agent.EventPromptEnd {
			return all, nil
		}
		after = page[len(page)-1].Seq
	}
}

func (k *Controller) query(ctx context.Context, sessionID, runID, name string, out any, args ...any) error {
	v, err := k.Client.QueryWorkflow(ctx, workflows.WorkflowID(sessionID), runID, name, args...)
	if isNotFound(err) {
		return fmt.Errorf("%w in session %s", ErrNoPrompt, sessionID)
	}
	if err != nil {
		return fmt.Errorf("query %s of session %s: %w", name, sessionID, err)
	}
	if err := v.Get(out); err != nil {
		return fmt.Errorf("decode %s of session %s: %w", name, sessionID, err)
	}
	return nil
}

// Result waits for a prompt and returns its result; a failed, aborted or
// cancelled prompt returns its PromptResult along with the error.
func Result(ctx context.Context, run client.WorkflowRun) (workflows.PromptResult, error) {
	res, err := runResult[workflows.PromptResult](ctx, run)
	if err != nil && res.Status != "" {
		return res, errors.New(res.Error)
	}
	return res, err
}

// asideGrace is how long followAside's stop lets the follower reach
// prompt_end once the result is in (the workflow writes prompt_end before
// its result, so its last events are not lost).
const asideGrace = 2 * time.Second

// followAside follows run runID of the session from its start on a
// goroutine of its own, passing its events to fn, while the caller waits
// for the run's result. Call the returned stop once the result is in: it
// lets the follower reach prompt_end for up to asideGrace, then stops it.
func (k *Controller) followAside(ctx context.Context, sessionID, runID string, fn func(agent.Event)) (stop func()) {
	fctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = k.Follow(fctx, sessionID, runID, 0, fn)
	}()
	return func() {
		select {
		case <-done:
		case <-time.After(asideGrace):
		}
		cancel()
		<-done
	}
}

// NewController returns the client side of prompts on c for the settings'
// task queue, decoding live output (heartbeat details) with the same
// payload codec the client encrypts with.
func NewController(c client.Client, s settings.Settings) (*Controller, error) {
	k := &Controller{Client: c, TaskQueue: s.Temporal.TaskQueue}
	cdc, err := codec.FromSettings(s)
	if err != nil {
		return nil, err
	}
	k.DataConverter = cdc.DataConverter()
	return k, nil
}
