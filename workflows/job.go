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

// jobKey is what decides a new memo: a JobStatus without its times.
type jobKey struct {
	status          string
	until           time.Time
	turn, toolCalls int
	tokens          int64
	cost            float64
}

// jobKey is what the prompt does now (agent.Job* statuses), and its
// counts. It reads fields only: Await evaluates it at every wait.
func (r *run) jobKey() jobKey {
	k := jobKey{status: agent.JobRunning, turn: r.Turn, toolCalls: r.ToolCalls,
		tokens: r.bud.spent.Tokens(), cost: r.bud.spent.CostUsd}
	switch {
	case r.compacting:
		k.status = agent.JobCompacting
	case len(r.waiting()) > 0:
		k.status = agent.JobApproval
	case r.pending != nil:
		k.status, k.until = agent.JobBackoff, r.pending.WakeAt
	case r.waitingHost != "":
		k.status = agent.JobWaitingHost
	case len(r.runningTools) > 0:
		k.status = agent.JobTool
	case r.streaming:
		k.status = agent.JobModel
	}
	return k
}

// publishJob keeps the prompt's job memo current from a coroutine of its
// own. Its Await condition is checked when the prompt's other coroutines
// wait, so a change is published at the prompt's next wait (a model call,
// tool calls, a backoff, an approval), and the changes between two waits
// make one upsert: a few history records per model call at most.
func (r *run) publishJob(ctx workflow.Context) {
	var search bool
	ready := workflow.SideEffect(ctx, func(workflow.Context) any { return searchAttributesReady.Load() })
	if err := ready.Get(&search); err != nil {
		search = false
	}
	workflow.Go(ctx, func(ctx workflow.Context) {
		var last jobKey
		var since time.Time
		for {
			if err := workflow.Await(ctx, func() bool { return r.jobKey() != last }); err != nil {
				return // the prompt was cancelled
			}
			k := r.jobKey()
			if k.status != last.status {
				since = workflow.Now(ctx).UTC()
			}
			last = k
			js := agent.JobStatus{Status: k.status, Since: since, Turn: k.turn, ToolCalls: k.toolCalls,
				Tokens: k.tokens, CostUsd: k.cost}
			if !k.until.IsZero() {
				u := k.until
				js.Until = &u
			}
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
