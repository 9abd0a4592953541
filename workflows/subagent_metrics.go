package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/internal/metrics"
)

// enterRunning counts the prompt into the running prompts and, a
// sub-agent's prompt, into the running sub-agents (metrics; no command).
func (r *run) enterRunning(ctx workflow.Context) {
	h := workflow.GetMetricsHandler(ctx)
	metrics.Enter(h, metrics.StateRunning)
	if r.in.Parent != nil {
		metrics.EnterSubAgent(h)
	}
}

// leaveRunning counts the prompt out of what enterRunning counted it in.
func (r *run) leaveRunning(ctx workflow.Context) {
	h := workflow.GetMetricsHandler(ctx)
	metrics.Leave(h, metrics.StateRunning)
	if r.in.Parent != nil {
		metrics.LeaveSubAgent(h)
	}
}
