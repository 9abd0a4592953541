package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	historypb "go.temporal.io/api/history/v1"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/workflows"
)

// The SIGKILL trial scaffold, shared by the tests of issues 7, 10 and 25.
// A trial is one prompt on its own task queue, served by a worker child
// that is SIGKILLed at a seeded random moment; a second worker then
// finishes the prompt. A batch (killPlan) runs a fault-free reference
// trial first, whose duration spreads the kill moments, then the seeded
// trials a few at a time, then checks each in its own subtest. What a
// test checks is its own; the scaffold only runs and records.

// killPlan describes a batch of SIGKILL trials.
type killPlan struct {
	name     string // names the trials' sessions (name-seed-NN) and task queues
	seed     uint64
	stream   uint64 // the random stream is PCG(seed, seed^stream)
	envSeed  bool   // FAULTS_SEED, when set, replaces seed
	trials   int
	parallel int
	// latencyMs is the scripted model's latency in the worker children.
	latencyMs int
	limit     time.Duration // how long one trial's prompt may take
	events    bool          // record the prompt's events (trial.events)
	// input is the prompt a trial starts; it may prepare tr.workspace
	// (with t.Cleanup, which is safe from the trial's goroutine).
	input func(t *testing.T, tr *trial) (workflows.PromptInput, error)

	rng *rand.Rand
}

// trial is what one trial observed.
type trial struct {
	i         int
	session   string
	workspace string
	delay     time.Duration // the kill moment, counted from the prompt's start
	noKill    bool          // the fault-free reference run
	// workerEnv is added to the first worker's environment.
	workerEnv []string
	// killAt, when set, replaces delay: it returns once the first worker
	// is to be killed (or has died by itself).
	killAt func(ctx context.Context, tr *trial, first *child) error

	err error // the trial could not run (not a finding about the product)
	// killedLog is what the killed worker printed around its model calls.
	killedLog []string
	res       workflows.PromptResult
	resErr    error
	events    []agent.Event
	hist      []*historypb.HistoryEvent
	file      sessionFile
	elapsed   time.Duration // from starting the prompt to its result
	wall      time.Duration // the whole trial, the workers' start included
}

// start fixes the batch's seed (FAULTS_SEED if the plan allows it) and
// its random stream.
func (p *killPlan) start(t *testing.T) {
	t.Helper()
	if v := os.Getenv("FAULTS_SEED"); p.envSeed && v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("FAULTS_SEED=%q: %v", v, err)
		}
		p.seed = n
	}
	p.rng = rand.New(rand.NewPCG(p.seed, p.seed^p.stream))
}

// sessionID names a trial's session.
func (p *killPlan) sessionID(suffix string) string {
	return fmt.Sprintf("%s-%d-%s", p.name, p.seed, suffix)
}

// reference runs the fault-free trial (no kill).
func (p *killPlan) reference(t *testing.T, e *env) *trial {
	tr := &trial{i: 99, session: p.sessionID("free"), noKill: true}
	p.run(t, e, tr)
	return tr
}

// draw makes the seeded trials, their kill moments seeded fractions of d.
func (p *killPlan) draw(d time.Duration) []*trial {
	trials := make([]*trial, p.trials, p.trials+2)
	for i := range trials {
		trials[i] = &trial{i: i, session: p.sessionID(fmt.Sprintf("%02d", i)),
			delay: time.Duration(p.rng.Float64() * float64(d))}
	}
	return trials
}

// runAll runs the trials, p.parallel at a time, and waits for them all.
func (p *killPlan) runAll(t *testing.T, e *env, trials []*trial) {
	sem := make(chan struct{}, p.parallel)
	var wg sync.WaitGroup
	for _, tr := range trials {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p.run(t, e, tr)
		}()
	}
	wg.Wait()
}

// checkEach checks every trial in its own subtest, trial-NN.
func checkEach(t *testing.T, trials []*trial, check func(t *testing.T, tr *trial)) {
	for _, tr := range trials {
		t.Run(fmt.Sprintf("trial-%02d", tr.i), func(t *testing.T) { check(t, tr) })
	}
}

// run runs one trial on its own task queue, so that its kill concerns its
// prompt only. It runs in its own goroutine and never calls t.Fatal:
// failures to run go to tr.err.
func (p *killPlan) run(t *testing.T, e *env, tr *trial) {
	began := time.Now()
	defer func() { tr.wall = time.Since(began) }()
	in, err := p.input(t, tr)
	if err != nil {
		tr.err = err
		return
	}
	queue := fmt.Sprintf("%s-%s-%02d", e.s.Temporal.TaskQueue, p.name, tr.i)
	first, err := spawnChild(time.Minute, workerVars(e.s, queue, p.latencyMs, tr.workerEnv...)...)
	if err != nil {
		tr.err = err
		return
	}
	defer first.kill()
	k := &client.Controller{Client: e.c, TaskQueue: queue}
	ctx, cancel := context.WithTimeout(context.Background(), p.limit)
	defer cancel()
	started := time.Now()
	run, err := k.StartPrompt(ctx, in)
	if err != nil {
		tr.err = err
		return
	}
	if !tr.noKill {
		if tr.killAt != nil {
			err = tr.killAt(ctx, tr, first)
		} else {
			time.Sleep(tr.delay)
		}
		if err != nil {
			tr.err = err
			return
		}
		first.kill()
		tr.killedLog = first.lines()
		second, err := spawnChild(time.Minute, workerVars(e.s, queue, p.latencyMs)...)
		if err != nil {
			tr.err = err
			return
		}
		defer second.kill()
	}
	tr.res, tr.resErr = client.Result(ctx, e.c.GetWorkflow(ctx, run.GetID(), run.GetRunID()))
	tr.elapsed = time.Since(started)
	if p.events {
		if tr.events, err = k.Events(ctx, tr.session, run.GetRunID(), 0); err != nil {
			tr.err = err
			return
		}
	}
	if tr.hist, err = historyOf(e.c, run.GetID(), run.GetRunID()); err != nil {
		tr.err = err
		return
	}
	tr.file, tr.err = loadSessionFile(e.s.DataDir, tr.session)
}

// checkCompleted fails unless the trial ran and its prompt completed with
// no failed workflow task (a stuck workflow, not a progressing one).
func checkCompleted(t *testing.T, tr *trial) {
	t.Helper()
	if tr.err != nil {
		t.Fatalf("trial could not run: %v", tr.err)
	}
	if tr.resErr != nil || tr.res.Status != agent.StatusCompleted {
		t.Fatalf("prompt did not complete: %+v, %v", tr.res, tr.resErr)
	}
	if f := workflowTaskFailures(tr.hist); len(f) > 0 {
		t.Fatalf("workflow task failures: %v", f)
	}
}

// reruns counts the activities of a history that completed on a later
// attempt (their first worker was killed).
func reruns(hist []*historypb.HistoryEvent) int {
	n := 0
	for _, ev := range hist {
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil && a.GetAttempt() > 1 {
			n++
		}
	}
	return n
}
