package main

// The fleet benchmark (issue 25): FleetJobs prompts on one credential
// while the scripted provider answers 429 with `retry-after: 5` for
// FleetLimit. The first job meets the limit; the rest start while it
// lasts. It counts the model calls made during the limit with
// coordinated backoff (the credentials' rate-limit windows, one probe per
// window) and without (model.coordinatedBackoff false: every job finds
// the limit with calls of its own), checks that every job completes in
// both, and prints the ratio. The worker runs in this process, so the
// provider's counts are read directly.

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
)

// FleetRun is one side of the fleet benchmark.
type FleetRun struct {
	Coordinated bool `json:"coordinated"`
	// LimitedCalls are the model calls answered with the 429, Calls all
	// model calls, Completed the jobs that completed.
	LimitedCalls int     `json:"limitedCalls"`
	Calls        int     `json:"calls"`
	Completed    int     `json:"completed"`
	WallSec      float64 `json:"wallSec"`
	// Trace is where the run's time went (fleettrace.go).
	Trace FleetTrace `json:"trace"`
}

// FleetResult is the fleet benchmark.
type FleetResult struct {
	Jobs       int        `json:"jobs"`
	LimitSec   float64    `json:"limitSec"`
	RetryAfter int        `json:"retryAfterSec"`
	On, Off    FleetRun   `json:"-"`
	Runs       []FleetRun `json:"runs"`
	// Ratio is the limited calls without coordination over those with.
	Ratio float64 `json:"ratio"`
	Load  string  `json:"load"`
}

func (h *harness) fleet(ctx context.Context) (*FleetResult, error) {
	jobs, limit := h.cfg.FleetJobs, h.cfg.FleetLimit
	res := &FleetResult{Jobs: jobs, LimitSec: limit.Seconds(), RetryAfter: 5}
	order := []bool{true, false}
	if h.cfg.FleetOffFirst {
		order = []bool{false, true}
	}
	for _, on := range order {
		r, err := h.fleetRun(ctx, jobs, limit, on)
		if err != nil {
			return nil, err
		}
		res.Runs = append(res.Runs, r)
		h.logf("fleet: coordinated=%v: %d limited calls, %d in all, %d/%d completed in %.1fs",
			on, r.LimitedCalls, r.Calls, r.Completed, jobs, r.WallSec)
	}
	for _, r := range res.Runs {
		if r.Coordinated {
			res.On = r
		} else {
			res.Off = r
		}
	}
	if res.On.LimitedCalls > 0 {
		res.Ratio = float64(res.Off.LimitedCalls) / float64(res.On.LimitedCalls)
	}
	res.Load = loadAverage()
	return res, nil
}

func (h *harness) fleetRun(ctx context.Context, jobs int, limit time.Duration, coordinated bool) (FleetRun, error) {
	name := fmt.Sprintf("fleet-%v", coordinated)
	s := h.scenario(name)
	s.DataDir = filepath.Join(h.dir, name) // its own auth.json
	s.Model.CoordinatedBackoff = coordinated
	s.Tools.Enabled = nil
	// Enough retries for a job that finds the limit alone (a call every
	// 5 s for the whole limit).
	s.Retry.MaxRetries = 30
	rl := &scripted.RateLimited{RetryAfter: 5 * time.Second}
	tr := &fleetTracer{}
	w, err := app.NewWorker(h.c, s, app.Extensions{Dev: true, Activities: func(a *activities.Activities) {
		a.WrapProvider(func(p llm.Provider) llm.Provider { rl.Inner = p; return tr.provider(rl) })
		a.Windows = tr.windows(a.Windows)
	}, Interceptors: []interceptor.WorkerInterceptor{tr.interceptor()}})
	if err != nil {
		return FleetRun{}, err
	}
	if err := w.Start(); err != nil {
		return FleetRun{}, err
	}
	defer w.Stop()
	start := time.Now()
	tr.start = start
	rl.Limit(time.Hour)
	first, err := h.startInput(ctx, s, fleetInput(s, name, 0))
	if err != nil {
		return FleetRun{}, err
	}
	for l, _ := rl.Counts(); l == 0; l, _ = rl.Counts() {
		if ctx.Err() != nil {
			return FleetRun{}, ctx.Err()
		}
		time.Sleep(10 * time.Millisecond)
	}
	rl.Limit(limit) // from the first 429
	limitEnd := time.Since(start) + limit
	runs := make([]sdkclient.WorkflowRun, jobs)
	runs[0] = first
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	sem := make(chan struct{}, 16)
	for i := 1; i < jobs; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			run, err := h.startInput(ctx, s, fleetInput(s, name, i))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			runs[i] = run
		}(i)
	}
	wg.Wait()
	lastStart := time.Since(start)
	if len(errs) > 0 {
		return FleetRun{}, fmt.Errorf("fleet: %d starts failed, first: %w", len(errs), errs[0])
	}
	out := FleetRun{Coordinated: coordinated}
	for _, run := range runs {
		if err := promptDone(ctx, run, agent.StatusCompleted); err != nil {
			h.logf("fleet: %v", err)
			continue
		}
		out.Completed++
	}
	out.WallSec = time.Since(start).Seconds()
	out.LimitedCalls, out.Calls = rl.Counts()
	if out.Trace, err = tr.trace(ctx, h, runs, lastStart, limitEnd); err != nil {
		return out, err
	}
	h.logf("fleet: coordinated=%v: %v", coordinated, out.Trace)
	if out.Completed != jobs {
		return out, fmt.Errorf("fleet (coordinated=%v): %d of %d jobs completed", coordinated, out.Completed, jobs)
	}
	return out, nil
}

// fleetInput is job i's prompt: a session of its own on the one
// credential (the scripted provider has none: its calls share one
// window, as the callers of one key do).
func fleetInput(s settings.Settings, name string, i int) workflows.PromptInput {
	return client.PromptInput(s, fmt.Sprintf("%s-%d", name, i), "answer")
}

// row is the fleet benchmark's line: the goal is at most about one probe
// per window per credential with coordination, where every job pays its
// own calls without.
func (f *FleetResult) row() Row {
	windows := int(f.LimitSec)/f.RetryAfter + 1
	return Row{"fleet: coordinated backoff",
		fmt.Sprintf("%d jobs, one credential, 429 retry-after %ds for %.0fs: %d calls met the limit with coordinated backoff vs %d without = %.1fx fewer (all calls %d vs %d; completed %d and %d of %d; wall %.1fs vs %.1fs; load %s)",
			f.Jobs, f.RetryAfter, f.LimitSec, f.On.LimitedCalls, f.Off.LimitedCalls, f.Ratio,
			f.On.Calls, f.Off.Calls, f.On.Completed, f.Off.Completed, f.Jobs, f.On.WallSec, f.Off.WallSec, f.Load),
		fmt.Sprintf("<= ~1 probe per window (%d windows) with, all jobs complete", windows),
		verdict(f.On.LimitedCalls <= windows+1 && f.On.Completed == f.Jobs && f.Off.Completed == f.Jobs)}
}
