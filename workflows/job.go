package workflows

import (
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/agent"
)

// The job memo (agent.MemoJob; docs/operating.md) and, when the worker
// found them registered, the search attributes agent.SearchAttr*: an
// attribute the namespace lacks would fail the workflow task.

// The job's search attributes (agent.SearchAttr*).
var (
	saStatus  = temporal.NewSearchAttributeKeyKeyword(agent.SearchAttrStatus)
	saTokens  = temporal.NewSearchAttributeKeyInt64(agent.SearchAttrTokens)
	saCostUsd = temporal.NewSearchAttributeKeyFloat64(agent.SearchAttrCostUsd)
)

// searchAttributesReady is set by the worker once its namespace has the
// job's search attributes (internal/app/jobsearch.go).
var searchAttributesReady atomic.Bool

// SetSearchAttributesReady says whether the namespace of this process's
// workers has the job's search attributes; prompts that start afterwards
// set them.
func SetSearchAttributesReady(ok bool) { searchAttributesReady.Store(ok) }

// job is what the prompt does now (agent.Job* statuses) and its counts,
// without Since (publishJob sets it). It reads fields only: Await
// evaluates it at every wait; Until points into r.pending, so a job is
// the same while the same retry waits.
func (r *run) job() agent.JobStatus {
	js := agent.JobStatus{Status: agent.JobRunning, Turn: r.Turn, ToolCalls: r.ToolCalls,
		Tokens: r.bud.spent.Tokens(), CostUsd: r.bud.spent.CostUsd}
	switch {
	case r.compacting:
		js.Status = agent.JobCompacting
	case len(r.waiting()) > 0:
		js.Status = agent.JobApproval
	case r.pending != nil:
		js.Status, js.Until = agent.JobBackoff, &r.pending.WakeAt
	case r.waitingHost != "":
		js.Status = agent.JobWaitingHost
	case len(r.runningTools) > 0:
		js.Status = agent.JobTool
	case r.streaming:
		js.Status = agent.JobModel
	}
	return js
}

// publishJob keeps the prompt's job memo current from a coroutine of its
// own. Its Await condition is checked when the prompt's other coroutines
// wait, so a change is published at the prompt's next wait (a model call,
// tool calls, a backoff, an approval), and the changes between two waits
// make one upsert: a few history records per model call at most.
func (r *run) publishJob(ctx workflow.Context) {
	var search bool // false unless the side effect says true
	_ = workflow.SideEffect(ctx, func(workflow.Context) any { return searchAttributesReady.Load() }).Get(&search)
	workflow.Go(ctx, func(ctx workflow.Context) {
		var last agent.JobStatus
		var since time.Time
		for {
			if err := workflow.Await(ctx, func() bool { return r.job() != last }); err != nil {
				return // the prompt was cancelled
			}
			js := r.job()
			if js.Status != last.Status {
				since = workflow.Now(ctx).UTC()
			}
			last = js
			js.Since = since
			if err := workflow.UpsertMemo(ctx, map[string]any{agent.MemoJob: js}); err != nil {
				workflow.GetLogger(ctx).Warn("job memo not published", "error", err)
			}
			if search {
				if err := workflow.UpsertTypedSearchAttributes(ctx, saStatus.ValueSet(js.Status),
					saTokens.ValueSet(js.Tokens), saCostUsd.ValueSet(js.CostUsd)); err != nil {
					workflow.GetLogger(ctx).Warn("job search attributes not published", "error", err)
				}
			}
		}
	})
}
