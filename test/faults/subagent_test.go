package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/control"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/tools"
	"github.com/durableagent/durableagent/workflows"
)

// The sub-agent SIGKILL trials: a prompt whose first answer calls task
// twice (two sub-agents at once) and then answers; each trial kills its
// worker at a seeded random moment of the prompt (in the parent's model
// calls, the SubAgent workflows, the sub-agents' prompts), and a second
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

// subTrial is what one trial observed.
type subTrial struct {
	i       int
	session string
	delay   time.Duration
	noKill  bool
	err     error
	res     workflows.PromptResult
	resErr  error
	file    sessionFile
	// failures are the workflow task failures in the parent's history.
	failures []string
}

// Exactly once under SIGKILL (issue 25): a worker killed at a seeded
// random moment of a prompt running two sub-agents; another worker
// finishes every prompt, each task call on the parent's branch has one
// result carrying its sub-agent's answer, and no sub-agent was started
// twice: its session has one prompt (one user message) and Temporal knows
// one run of its prompt's workflow id and of its SubAgent workflow id.
func TestFaults_SIGKILLWhileSubAgentsRunStartsEachOnce(t *testing.T) {
	skipShort(t)
	rng := rand.New(rand.NewPCG(subSeed, subSeed^0x9e3779b9))
	e := newEnv(t, sharedAddress(t))

	free := &subTrial{i: 99, session: fmt.Sprintf("sub-%d-free", subSeed), noKill: true}
	began := time.Now()
	runSubTrial(t, e, free)
	elapsed := time.Since(began)
	checkSubTrial(t, e, free)
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("fault-free prompt with two sub-agents took %v", elapsed.Round(time.Millisecond))

	trials := make([]*subTrial, subTrials)
	for i := range trials {
		trials[i] = &subTrial{i: i, session: fmt.Sprintf("sub-%d-%02d", subSeed, i),
			delay: time.Duration(rng.Float64() * float64(elapsed))}
	}
	sem := make(chan struct{}, subParallel)
	var wg sync.WaitGroup
	for _, tr := range trials {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			runSubTrial(t, e, tr)
		}()
	}
	wg.Wait()
	both := 0
	for _, tr := range trials {
		t.Run(fmt.Sprintf("trial-%02d", tr.i), func(t *testing.T) {
			if checkSubTrial(t, e, tr) == 2 {
				both++
			}
		})
	}
	// A kill that lost the parent's first model call used up the script
	// element of the task calls; most kills land later, among them.
	t.Logf("seed %d: %d trials, %d ran both sub-agents", subSeed, len(trials), both)
	if both < subTrials/2 {
		t.Errorf("only %d of %d trials ran their sub-agents: the kills did not exercise them", both, subTrials)
	}
}

// runSubTrial runs one trial on its own task queue. It runs in its own
// goroutine: failures to run go to tr.err.
func runSubTrial(t *testing.T, e *env, tr *subTrial) {
	queue := fmt.Sprintf("%s-sub-%02d", e.s.Temporal.TaskQueue, tr.i)
	ws, err := os.MkdirTemp("", "faults-sub-ws-")
	if err != nil {
		tr.err = err
		return
	}
	t.Cleanup(func() { os.RemoveAll(ws) })
	first, err := spawnChild(time.Minute, workerVars(e.s, queue, subLatencyMs)...)
	if err != nil {
		tr.err = err
		return
	}
	defer first.kill()
	k := &control.Controller{Client: e.c, TaskQueue: queue, PollInterval: 50 * time.Millisecond}
	in := app.PromptInput(e.s, tr.session, "split the job")
	in.Model.Faults = subScript
	in.Workspace = ws
	in.Tools.Enabled = append(in.Tools.Enabled, tools.Task)
	ctx, cancel := context.WithTimeout(context.Background(), subTrialLimit)
	defer cancel()
	run, err := k.StartPrompt(ctx, in)
	if err != nil {
		tr.err = err
		return
	}
	if !tr.noKill {
		time.Sleep(tr.delay)
		first.kill()
		second, err := spawnChild(time.Minute, workerVars(e.s, queue, subLatencyMs)...)
		if err != nil {
			tr.err = err
			return
		}
		defer second.kill()
	}
	tr.res, tr.resErr = control.Result(ctx, e.c.GetWorkflow(ctx, run.GetID(), run.GetRunID()))
	hist, err := historyOf(e.c, run.GetID(), run.GetRunID())
	if err != nil {
		tr.err = err
		return
	}
	tr.failures = workflowTaskFailures(hist)
	tr.file, tr.err = loadSessionFile(e.s.DataDir, tr.session)
}

// checkSubTrial checks one trial and returns its task calls. A parent model call lost with its
// worker uses up its script element (the scripted model indexes its
// script by the calls the session records), so the checks hold for the
// task calls the branch shows.
func checkSubTrial(t *testing.T, e *env, tr *subTrial) (taskCalls int) {
	t.Helper()
	if tr.err != nil {
		t.Fatalf("trial could not run: %v", tr.err)
	}
	if tr.resErr != nil || tr.res.Status != agent.StatusCompleted {
		t.Fatalf("prompt did not complete: %+v, %v", tr.res, tr.resErr)
	}
	if len(tr.failures) > 0 {
		t.Fatalf("workflow task failures: %v", tr.failures)
	}
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
		for _, id := range []string{workflows.WorkflowID(child), workflows.WorkflowID(tr.session) + "-tool-" + res.ID + "-" + c.ID} {
			if n := runsOf(t, e, id); n != 1 {
				t.Fatalf("workflow %s has %d runs, want 1: a sub-agent started twice", id, n)
			}
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
