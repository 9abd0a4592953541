package integration

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/testserver"
	"github.com/durableagent/durableagent/workflows"
	"go.temporal.io/sdk/activity"
	sdkclient "go.temporal.io/sdk/client"
)

// rateLimitedWorker starts the env's worker with the scripted model behind
// a rate limit (scripted.RateLimited) and returns the limit.
func (e *env) rateLimitedWorker(retryAfter time.Duration) *scripted.RateLimited {
	e.t.Helper()
	rl := &scripted.RateLimited{RetryAfter: retryAfter}
	e.ext.Activities = func(a *activities.Activities) {
		a.WrapProvider(func(p llm.Provider) llm.Provider { rl.Inner = p; return rl })
	}
	e.startWorker()
	return rl
}

// Spec 18.1 (coordinated backoff): N jobs on one credential meet a rate
// limit answered with retry-after; the first 429 opens the credential's
// window, the other jobs hold their calls until it ends and one call
// probes per window, so the limit costs fewer calls than there are jobs
// (without the windows every job pays at least one, and one more per
// hint), and every job completes when the limit lifts.
func TestIntegration_FleetCoordinatedBackoff(t *testing.T) {
	e := newEnv(t)
	e.s.Retry.MaxRetries = 10
	rl := e.rateLimitedWorker(time.Second)
	const n = 8
	rl.Limit(time.Hour)
	runs := []sdkclient.WorkflowRun{e.prompt("fleet-0")}
	// The first job meets the limit, which lasts 3 s from then; the
	// others come while its window is open.
	testserver.WaitFor(t, 30*time.Second, "the first 429", func() bool { l, _ := rl.Counts(); return l >= 1 })
	rl.Limit(3 * time.Second)
	for i := 1; i < n; i++ {
		runs = append(runs, e.prompt(fmt.Sprintf("fleet-%d", i)))
	}
	for i, run := range runs {
		res, err := e.result(run)
		if err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("job %d: %+v, %v; want it to complete once the limit lifts", i, res, err)
		}
	}
	limited, total := rl.Counts()
	t.Logf("%d jobs: %d calls during the 3s limit (retry-after 1s), %d in all", n, limited, total)
	if limited >= n {
		t.Fatalf("%d calls met the limit, want fewer than the %d jobs (one probe per 1s window)", limited, n)
	}
	if total < n+limited {
		t.Fatalf("%d calls in all, want every job's answer (%d) besides the %d limited", total, n, limited)
	}
}

// overlap is a provider wrapper that measures how many calls run at once
// and on which task queues.
type overlap struct {
	inner llm.Provider
	delay time.Duration

	// slow are longer delays of some sessions' calls.
	slow map[string]time.Duration

	mu           sync.Mutex
	running, max int
	queues       map[string]int
	// order lists the sessions of the calls as they started.
	order []string
}

func (o *overlap) Complete(ctx context.Context, req llm.Request) agent.Message {
	o.mu.Lock()
	o.running++
	o.max = max(o.max, o.running)
	o.queues[activity.GetInfo(ctx).TaskQueue]++
	o.order = append(o.order, req.SessionID)
	o.mu.Unlock()
	defer func() { o.mu.Lock(); o.running--; o.mu.Unlock() }()
	delay := o.delay
	if d, ok := o.slow[req.SessionID]; ok {
		delay = d
	}
	select {
	case <-time.After(delay):
	case <-ctx.Done():
	}
	return o.inner.Complete(ctx, req)
}

// Spec 18.2 (fleet-wide limits): with model.maxConcurrentCalls 1 the model
// calls run on the provider's model queue, one at a time: two prompts
// started together have their calls serialised, and both complete.
func TestIntegration_FleetMaxConcurrentCallsSerialises(t *testing.T) {
	e := newEnv(t)
	e.s.Model.MaxConcurrentCalls = 1
	o := &overlap{delay: 700 * time.Millisecond, queues: map[string]int{}}
	e.ext.Activities = func(a *activities.Activities) {
		a.WrapProvider(func(p llm.Provider) llm.Provider { o.inner = p; return o })
	}
	e.startWorker()
	runs := []sdkclient.WorkflowRun{e.prompt("serial-a"), e.prompt("serial-b")}
	for i, run := range runs {
		if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("prompt %d: %+v, %v", i, res, err)
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	want := activities.ModelQueue(e.s.Temporal.TaskQueue, e.s.Model.Provider)
	if o.max != 1 || o.queues[want] < 2 || len(o.queues) != 1 {
		t.Fatalf("at most %d calls at once on queues %v, want 1 at a time, all on %s", o.max, o.queues, want)
	}
}

// Spec 18.3 (priority): when model calls wait for the same limit, an
// interactive prompt's call goes before a scheduled one's that waited
// longer. Priority keys need the server's priority matcher, on by
// default in the pinned server (matching.useNewMatcher).
func TestIntegration_FleetInteractiveBeforeScheduled(t *testing.T) {
	e := newEnv(t)
	e.s.Model.MaxConcurrentCalls = 1
	o := &overlap{delay: 300 * time.Millisecond, queues: map[string]int{}, slow: map[string]time.Duration{"prio-blocker": 3 * time.Second}}
	e.ext.Activities = func(a *activities.Activities) {
		a.WrapProvider(func(p llm.Provider) llm.Provider { o.inner = p; return o })
	}
	e.startWorker()
	start := func(session, origin string) sdkclient.WorkflowRun {
		in := client.PromptInput(e.s, session, "fix the bug")
		in.Origin = origin
		run, err := e.k.StartPrompt(context.Background(), in)
		if err != nil {
			t.Fatalf("start prompt: %v", err)
		}
		return run
	}
	runs := []sdkclient.WorkflowRun{start("prio-blocker", workflows.OriginInteractive)}
	testserver.WaitFor(t, 30*time.Second, "the blocker's call", func() bool { o.mu.Lock(); defer o.mu.Unlock(); return o.running == 1 })
	runs = append(runs, start("prio-scheduled", workflows.OriginScheduled))
	time.Sleep(700 * time.Millisecond) // its call waits in the queue first
	runs = append(runs, start("prio-interactive", workflows.OriginInteractive))
	for i, run := range runs {
		if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("prompt %d: %+v, %v", i, res, err)
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	want := []string{"prio-blocker", "prio-interactive", "prio-scheduled"}
	if !slices.Equal(o.order, want) {
		t.Fatalf("model calls ran in the order %v, want %v (the interactive prompt's first)", o.order, want)
	}
}
