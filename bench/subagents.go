package main

// The subagents benchmark (issue 25, "Sub-agents as child workflows"): a
// parent prompt whose one answer makes SubAgentsN task calls, each run as
// a sub-agent (the sub-agent's Prompt as a child of the parent's),
// against SubAgentsN independent prompts started at once on the same
// worker, with the scripted model. It measures the wall time of each
// (first start to last answer) and the history a sub-agent costs: the
// events of its Prompt against an independent prompt's, and the parent's
// history per sub-agent.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/workflows"
)

// SubAgentsResult is the subagents benchmark.
type SubAgentsResult struct {
	N int `json:"n"`
	// FanoutSec: the parent's start to its answer, with its N sub-agents;
	// IndependentSec: N prompts started at once, first start to last end.
	FanoutSec      float64 `json:"fanoutSec"`
	IndependentSec float64 `json:"independentSec"`
	// Ratio is FanoutSec / IndependentSec.
	Ratio float64 `json:"ratio"`
	// Events of history: a sub-agent's Prompt (mean), an independent
	// prompt's (mean), the parent's in all.
	ChildPromptEvents float64 `json:"childPromptEvents"`
	IndependentEvents float64 `json:"independentEvents"`
	ParentEvents      int     `json:"parentEvents"`
	// ChildStartsSec is where the fan-out's time goes: from the parent's
	// first child start command to the last ChildWorkflowExecutionStarted
	// in its history (the server starts one parent's children one after
	// another).
	ChildStartsSec float64 `json:"childStartsSec"`
	Load           string  `json:"load"`
}

// subagents runs the benchmark on a worker of its own.
func (h *harness) subagents(ctx context.Context) (*SubAgentsResult, error) {
	n := h.cfg.SubAgentsN
	s := h.scenario("subagents")
	s.Tools.Enabled = []string{"read", "ls", "task"}
	s.Agent.SubAgents.MaxConcurrent, s.Agent.SubAgents.MaxTotal = n, n
	w, err := startChild(ctx, s)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	res := &SubAgentsResult{N: n, Load: loadAverage()}

	// N independent prompts at once.
	start := time.Now()
	runs := make([]string, n)
	err = parallel(n, startWidth, func(i int) error {
		sess := fmt.Sprintf("sub-ind-%d", i)
		run, err := h.startPrompt(ctx, s, sess, fmt.Sprintf("do part %d", i))
		if err != nil {
			return err
		}
		runs[i] = sess
		return promptDone(ctx, run, agent.StatusCompleted)
	})
	if err != nil {
		return nil, fmt.Errorf("independent prompts: %w", err)
	}
	res.IndependentSec = time.Since(start).Seconds()
	total := 0
	for _, sess := range runs {
		evs, err := h.history(ctx, h.c.GetWorkflow(ctx, workflows.WorkflowID(sess), ""))
		if err != nil {
			return nil, err
		}
		total += len(evs)
	}
	res.IndependentEvents = float64(total) / float64(n)

	// One parent whose answer makes N task calls.
	calls := make([]string, n)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"name":"task","arguments":{"description":"part %d","prompt":"do part %d"}}`, i, i)
	}
	start = time.Now()
	run, err := h.startPrompt(ctx, s, "sub-parent", "split the work",
		"tools:["+strings.Join(calls, ",")+"]", "text:all parts done")
	if err != nil {
		return nil, err
	}
	if err := promptDone(ctx, run, agent.StatusCompleted); err != nil {
		return nil, err
	}
	res.FanoutSec = time.Since(start).Seconds()
	res.Ratio = res.FanoutSec / res.IndependentSec
	parent, err := h.history(ctx, run)
	if err != nil {
		return nil, err
	}
	res.ParentEvents = len(parent)
	events, err := h.events(ctx, s, "sub-parent", run.GetRunID())
	if err != nil {
		return nil, err
	}
	var children []string
	for _, e := range events {
		if e.Type == agent.EventSubAgentStart {
			children = append(children, e.SessionID)
		}
	}
	if len(children) != n {
		return nil, fmt.Errorf("the parent started %d sub-agents, want %d", len(children), n)
	}
	var prompts int
	for _, child := range children {
		evs, err := h.history(ctx, h.c.GetWorkflow(ctx, workflows.WorkflowID(child), ""))
		if err != nil {
			return nil, err
		}
		prompts += len(evs)
	}
	var firstStart, lastStarted time.Time
	for _, ev := range parent {
		if ev.GetStartChildWorkflowExecutionInitiatedEventAttributes() != nil && firstStart.IsZero() {
			firstStart = ev.GetEventTime().AsTime()
		}
		if ev.GetChildWorkflowExecutionStartedEventAttributes() != nil {
			lastStarted = ev.GetEventTime().AsTime()
		}
	}
	res.ChildStartsSec = lastStarted.Sub(firstStart).Seconds()
	res.ChildPromptEvents = float64(prompts) / float64(n)
	return res, nil
}

// rows are the benchmark's report rows.
func (r *SubAgentsResult) rows() []Row {
	return []Row{
		{fmt.Sprintf("subagents N=%d wall time", r.N),
			fmt.Sprintf("a parent fanning out to %d sub-agents: %.1f s, of which %.1f s until the server had started its last child; %d independent prompts at once: %.1f s; ratio %.2fx (load %s)",
				r.N, r.FanoutSec, r.ChildStartsSec, r.N, r.IndependentSec, r.Ratio, r.Load),
			"info", "info"},
		{fmt.Sprintf("subagents N=%d history", r.N),
			fmt.Sprintf("per sub-agent: its Prompt %.0f events; an independent prompt %.0f; the parent %d in all (%.1f per sub-agent)",
				r.ChildPromptEvents, r.IndependentEvents, r.ParentEvents, float64(r.ParentEvents)/float64(r.N)),
			"info", "info"},
	}
}
