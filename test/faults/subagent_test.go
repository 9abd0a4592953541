package faults

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/tools"
	"github.com/durableagent/durableagent/workflows"
)

// The sub-agent SIGKILL trials: a prompt whose first answer calls task
// twice (two sub-agents at once) and then answers; each trial kills its
// worker at a seeded random moment of the prompt (in the parent's model
// calls, the task calls' steps, the sub-agents' prompts), and a second
// worker finishes it.
const (
	subTrials     = 20
	subParallel   = 4
	subLatencyMs  = 150
	subSeed       = 25
	subTrialLimit = 3 * time.Minute
)

var subScript = []string{
	`tools:[{"name":"task","arguments":{"description":"first","prompt":"do the first part"}},` +
		`{"name":"task","arguments":{"description":"second","prompt":"do the second part"}}]`,
	`text:both parts done`,
}

// Exactly once under SIGKILL (issue 25): a worker killed at a seeded
// random moment of a prompt running two sub-agents; another worker
// finishes every prompt, each task call on the parent's branch has one
// result carrying its sub-agent's answer, and no sub-agent was started
// twice: its session has one prompt (one user message) and Temporal knows
// one run of its prompt's workflow id.
func TestFaults_SIGKILLWhileSubAgentsRunStartsEachOnce(t *testing.T) {
	alongside(t)
	p := &killPlan{name: "sub", seed: subSeed, stream: 0x9e3779b9, trials: subTrials, parallel: subParallel,
		latencyMs: subLatencyMs, limit: subTrialLimit}
	p.start(t)
	e := newEnv(t, sharedAddress(t))
	p.input = func(t *testing.T, tr *trial) (workflows.PromptInput, error) {
		ws, err := os.MkdirTemp("", "faults-sub-ws-")
		if err != nil {
			return workflows.PromptInput{}, err
		}
		t.Cleanup(func() { os.RemoveAll(ws) })
		tr.workspace = ws
		in := client.PromptInput(e.s, tr.session, "split the job")
		in.Model.Faults = subScript
		in.Workspace = ws
		in.Tools.Enabled = append(in.Tools.Enabled, tools.Task)
		return in, nil
	}

	// The reference's whole run, its worker's start included, spreads
	// the kill moments.
	free := p.reference(t, e)
	checkSubTrial(t, e, free)
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("fault-free prompt with two sub-agents took %v", free.wall.Round(time.Millisecond))

	trials := p.draw(free.wall)
	p.runAll(t, e, trials)
	both := 0
	checkEach(t, trials, func(t *testing.T, tr *trial) {
		if checkSubTrial(t, e, tr) == 2 {
			both++
		}
	})
	// A kill that lost the parent's first model call used up the script
	// element of the task calls; most kills land later, among them.
	t.Logf("seed %d: %d trials, %d ran both sub-agents", p.seed, len(trials), both)
	if both < subTrials/2 {
		t.Errorf("only %d of %d trials ran their sub-agents: the kills did not exercise them", both, subTrials)
	}
}

// checkSubTrial checks one trial and returns its task calls. A parent model call lost with its
// worker uses up its script element (the scripted model indexes its
// script by the calls the session records), so the checks hold for the
// task calls the branch shows.
func checkSubTrial(t *testing.T, e *env, tr *trial) (taskCalls int) {
	t.Helper()
	checkCompleted(t, tr)
	sess := &session.Session{Entries: tr.file.entries}
	results := map[string]session.Entry{}
	var calls []agent.ToolCall
	for _, en := range sess.Branch(tr.res.LeafID) {
		switch m := en.Message; {
		case m == nil:
		case m.Role == agent.RoleAssistant:
			calls = append(calls, m.ToolCalls()...)
		case m.Role == agent.RoleToolResult:
			if _, twice := results[m.ToolCallID]; twice {
				t.Fatalf("task call %s has two results", m.ToolCallID)
			}
			results[m.ToolCallID] = en
		}
	}
	if tr.noKill && len(calls) != 2 {
		t.Fatalf("fault-free run made %d task calls, want 2", len(calls))
	}
	for _, c := range calls {
		res, ok := results[c.ID]
		if !ok {
			t.Fatalf("task call %s has no result", c.ID)
		}
		text := res.Message.Text()
		child := workflows.SubAgentSessionID(tr.session, res.ID, c.ID)
		if res.Message.IsError || !strings.Contains(text, "session "+child+": completed") {
			t.Fatalf("task call %s: result %q, want its sub-agent %s's answer", c.ID, text, child)
		}
		f, err := loadSessionFile(e.s.DataDir, child)
		if err != nil {
			t.Fatal(err)
		}
		users := 0
		for _, m := range f.messages() {
			if m.Role == agent.RoleUser {
				users++
			}
		}
		if users != 1 || len(f.warnings) > 0 || f.lines != len(f.entries) {
			t.Fatalf("sub-agent session %s: %d user messages, %d lines for %d entries, warnings %q; want one prompt",
				child, users, f.lines, len(f.entries), f.warnings)
		}
		if id := workflows.WorkflowID(child); runsOf(t, e, id) != 1 {
			t.Fatalf("workflow %s has %d runs, want 1: a sub-agent started twice", id, runsOf(t, e, id))
		}
	}
	return len(calls)
}

// runsOf counts the executions Temporal's visibility lists under a
// workflow id.
func runsOf(t *testing.T, e *env, id string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var n int
	for {
		resp, err := e.c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: e.s.Temporal.Namespace, Query: fmt.Sprintf("WorkflowId = '%s'", id)})
		if err != nil {
			t.Fatalf("list workflows %s: %v", id, err)
		}
		n = len(resp.GetExecutions())
		if n > 0 || ctx.Err() != nil {
			return n
		}
		time.Sleep(200 * time.Millisecond) // visibility lags a little
	}
}
