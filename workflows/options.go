package workflows

import (
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/tools"
)

// The options of every activity and child workflow the workflows run, in
// one place.

// policy retries with exponential backoff from initial, up to attempts
// attempts, except for the error types named.
func policy(initial time.Duration, attempts int32, nonRetryable ...string) *temporal.RetryPolicy {
	return &temporal.RetryPolicy{InitialInterval: initial, BackoffCoefficient: 2,
		MaximumAttempts: attempts, NonRetryableErrorTypes: nonRetryable}
}

// modelOptions are the options of a model call (CallModel, Summarize).
// One attempt: model errors come back as data and the workflow's retry
// policy (a durable timer) is the only retry loop. queue is the model
// queue of the call's provider ("": the prompt's own task queue).
func modelOptions(ctx workflow.Context, in PromptInput, summary, queue string) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:           queue,
		Priority:            priorityOf(in),
		StartToCloseTimeout: msOr(in.ModelTimeoutMs, DefaultModelTimeout),
		HeartbeatTimeout:    msOr(in.HeartbeatTimeoutMs, DefaultHeartbeatTimeout),
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		WaitForCancellation: true,
		Summary:             summary,
	})
}

// modelQueue is the task queue of the run's next model call: the model
// queue of its provider when BeginPrompt said the worker limits model
// calls (a fact recorded in history, so replays route alike), else ""
// (the prompt's queue).
func (r *run) modelQueue(ctx workflow.Context) string {
	if !r.ModelQueues {
		return ""
	}
	return activities.ModelQueue(workflow.GetInfo(ctx).TaskQueueName, r.in.Model.Provider)
}

// storeOptions are the options of session activities run as regular
// activities: a short timeout (a write takes milliseconds) and retries,
// since they are idempotent.
func storeOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         policy(500*time.Millisecond, 5),
	})
}

// localOptions are the options of the session's local activities.
func localOptions(ctx workflow.Context) workflow.Context {
	return workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{
		StartToCloseTimeout: 10 * time.Second,
		RetryPolicy:         policy(500*time.Millisecond, 5, activities.ErrTypeBadInput, activities.ErrTypeWorkspace),
	})
}

// placed applies opts on the task queue of the session's tool host (host
// placement: the work runs on the worker host that holds the workspace)
// with the host wait as its schedule-to-start timeout; host "" leaves
// them as they are (any worker). A call that waited out its host wait
// (waits times) is scheduled again under a new id and a longer wait
// (hostWait).
func placed(ctx workflow.Context, opts workflow.ActivityOptions, host string, waitMs int64, waits int) workflow.Context {
	if host != "" {
		opts.TaskQueue = activities.ToolQueue(workflow.GetInfo(ctx).TaskQueueName, host)
		opts.ScheduleToStartTimeout = hostWait(msOr(waitMs, DefaultHostWait), waits)
		if waits > 0 {
			opts.ActivityID += fmt.Sprintf("-wait%d", waits)
		}
	}
	return workflow.WithActivityOptions(ctx, opts)
}

// msOr is a duration setting of ms milliseconds, or def when it is 0.
func msOr(ms int64, def time.Duration) time.Duration {
	if ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return def
}

// toolOptions are the activity options of one tool call: a deterministic
// activity id derived from the call, heartbeats, retries only where a
// second attempt cannot do harm (the tool's spec), and the host's queue.
func (r *run) toolOptions(ctx workflow.Context, c *toolCall) workflow.Context {
	return placed(ctx, workflow.ActivityOptions{
		ActivityID:          "tool-" + c.resultID + "-" + idChars(c.ref.ID, 64, "_-"),
		StartToCloseTimeout: c.spec.CallTimeout(c.ref.TimeoutSec, r.in.Tools.BashTimeoutMs),
		HeartbeatTimeout:    msOr(r.in.HeartbeatTimeoutMs, DefaultHeartbeatTimeout),
		RetryPolicy:         policy(time.Second, c.spec.Attempts, activities.ErrTypeBadInput, activities.ErrTypeWorkspace),
		WaitForCancellation: true,
		Summary:             line.Cut(c.ref.Name+" "+c.ref.Summary, 120),
	}, r.ToolHost, r.in.Tools.HostWaitMs, c.waits)
}

// subAgentOptions are the options of a sub-agent's prompt: the
// workflow id of its session, so it is an ordinary session's prompt; an
// id used before is refused (the sub-agent never runs twice); cancelled
// with its parent, which waits for it to end.
func subAgentOptions(ctx workflow.Context, sessionID, description string) workflow.Context {
	return workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:            WorkflowID(sessionID),
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		WaitForCancellation:   true,
		StaticSummary:         line.Cut("sub-agent: "+description, 120),
	})
}

// userBashOptions are the options of a command the user runs (the Bash
// workflow): one attempt, since a command is never run twice, on the
// session's tool host.
func userBashOptions(ctx workflow.Context, in BashInput, host, entryID string) workflow.Context {
	return placed(ctx, workflow.ActivityOptions{
		ActivityID:          "bash-" + entryID,
		StartToCloseTimeout: tools.SpecOf(tools.Bash).CallTimeout(0, in.TimeoutMs),
		HeartbeatTimeout:    msOr(in.HeartbeatTimeoutMs, DefaultHeartbeatTimeout),
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		WaitForCancellation: true,
		Summary:             line.Cut(tools.Bash+" "+in.Command, 120),
	}, host, in.HostWaitMs, 0)
}

// deleteOptions are the options of the DeleteSession activity: removing
// a directory tree of outputs may take longer than a store write; every
// step is idempotent, so Temporal may retry it.
func deleteOptions(ctx workflow.Context, host string, waitMs int64) workflow.Context {
	return placed(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         policy(time.Second, 5),
	}, host, waitMs, 0)
}

// checkpointOptions: on the session's tool host, heartbeats (a lost
// worker is noticed), two attempts; a checkpoint is idempotent per turn.
func (r *run) checkpointOptions(ctx workflow.Context, id string) workflow.Context {
	return placed(ctx, workflow.ActivityOptions{
		ActivityID:          id,
		StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:    msOr(r.in.HeartbeatTimeoutMs, DefaultHeartbeatTimeout),
		RetryPolicy:         policy(time.Second, 2, activities.ErrTypeBadInput),
		Summary:             "checkpoint",
	}, r.ToolHost, r.in.Tools.HostWaitMs, 0)
}
