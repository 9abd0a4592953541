package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	sdkclient "go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/codec"
	"github.com/durableagent/durableagent/internal/devserver"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

// e503 is the scripted fault the retry benchmarks inject.
const e503 = "503 Service Unavailable"

// harness is one embedded server (temp data dir, free port, no UI) and a
// client of it. Each benchmark runs its own worker process on its own task
// queue.
type harness struct {
	cfg   Config
	dir   string
	srv   *devserver.Server
	base  settings.Settings
	c     sdkclient.Client
	codec bool
	logw  io.Writer
	// startRetries counts start requests that were retried.
	startRetries atomic.Int64
	logMu        sync.Mutex
	t0           time.Time
}

func newHarness(ctx context.Context, cfg Config) (*harness, error) {
	dir, err := os.MkdirTemp(cfg.Dir, "durable-agent-bench-")
	if err != nil {
		return nil, err
	}
	h := &harness{cfg: cfg, dir: dir, logw: cfg.Log, t0: time.Now()}
	if h.logw == nil {
		h.logw = io.Discard
	}
	sctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	h.logf("starting the embedded Temporal server in %s", dir)
	srv, err := devserver.Start(sctx, devserver.Options{
		DataDir: filepath.Join(dir, "temporal"), Port: 0, UIPort: devserver.NoUI, Logger: quiet(),
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	h.srv = srv
	s := settings.Defaults()
	s.DataDir = filepath.Join(dir, "worker")
	s.Temporal.Address = srv.FrontendAddress()
	s.Temporal.Namespace = devserver.DefaultNamespace
	// Zero latency: no wait before the answer and no pause between its
	// streamed words (the default 20 ms per word, there for the demo,
	// added 120 ms to every prompt of the overhead benchmark).
	s.Scripted.LatencyMs = 0
	s.Scripted.StreamDelayMs = 0
	s.Scripted.Faults = nil
	h.base = s
	if cdc, err := codec.FromSettings(s); err == nil && cdc != nil {
		h.codec = true
	}
	c, err := client.Dial(sctx, s, quiet())
	if err != nil {
		h.close()
		return nil, err
	}
	h.c = c
	return h, nil
}

func (h *harness) close() {
	if h.c != nil {
		h.c.Close()
	}
	if h.srv != nil {
		if err := h.srv.Stop(); err != nil {
			h.logf("stop server: %v", err)
		}
	}
	_ = os.RemoveAll(h.dir)
}

func (h *harness) logf(format string, args ...any) {
	h.logMu.Lock()
	defer h.logMu.Unlock()
	fmt.Fprintf(h.logw, "[%6.1fs] %s\n", time.Since(h.t0).Seconds(), fmt.Sprintf(format, args...))
}

// scenario returns settings on a task queue of its own.
func (h *harness) scenario(name string) settings.Settings {
	s := h.base
	s.Temporal.TaskQueue = "bench-" + name
	return s
}

func (h *harness) controller(s settings.Settings) *client.Controller {
	// A follower that has to wait (a query that is not answered, Temporal
	// out of reach) says so in the log, with the time, so a stall in a
	// round shows its cause.
	return &client.Controller{Client: h.c, TaskQueue: s.Temporal.TaskQueue,
		OnWait: func(msg string) { h.logf("follow: %s", msg) }}
}

// startAttempts bounds how often a start is tried: under a burst the
// embedded server's single SQLite connection can keep a start request
// waiting longer than the SDK's 10 s RPC timeout.
const startAttempts = 5

// startPrompt starts a prompt of settings s in session sess. A start that
// timed out may still have happened: a retry that finds the session busy
// takes that run.
func (h *harness) startPrompt(ctx context.Context, s settings.Settings, sess, msg string, faults ...string) (sdkclient.WorkflowRun, error) {
	in := client.PromptInput(s, sess, msg)
	in.Model.Faults = faults
	return h.startInput(ctx, s, in)
}

// startInput starts a prompt of input in on the task queue of s, retried
// like startPrompt.
func (h *harness) startInput(ctx context.Context, s settings.Settings, in workflows.PromptInput) (sdkclient.WorkflowRun, error) {
	sess := in.SessionID
	k := h.controller(s)
	for attempt := 1; ; attempt++ {
		run, err := k.StartPrompt(ctx, in)
		switch {
		case err == nil:
			return run, nil
		case attempt > 1 && errors.Is(err, client.ErrSessionBusy):
			return h.c.GetWorkflow(ctx, workflows.WorkflowID(sess), ""), nil
		case attempt == startAttempts || ctx.Err() != nil || errors.Is(err, client.ErrSessionBusy):
			return nil, err
		}
		h.startRetries.Add(1)
		time.Sleep(time.Second)
	}
}

// promptDone waits for a prompt and checks it ended with status want.
func promptDone(ctx context.Context, run sdkclient.WorkflowRun, want string) error {
	res, err := client.Result(ctx, run)
	if res.Status != want {
		return fmt.Errorf("prompt %s ended %q (%v), want %s", run.GetID(), res.Status, err, want)
	}
	return nil
}

// startBare starts the baseline workflow (retried like startPrompt; a
// second start of a running id returns that run).
func (h *harness) startBare(ctx context.Context, s settings.Settings, id string, in BareInput) (sdkclient.WorkflowRun, error) {
	for attempt := 1; ; attempt++ {
		run, err := h.c.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: id, TaskQueue: s.Temporal.TaskQueue},
			BareWorkflowName, in)
		if err == nil || attempt == startAttempts || ctx.Err() != nil {
			return run, err
		}
		h.startRetries.Add(1)
		time.Sleep(time.Second)
	}
}

func bareDone(ctx context.Context, run sdkclient.WorkflowRun) error {
	var out string
	if err := run.Get(ctx, &out); err != nil {
		return fmt.Errorf("bare workflow %s: %w", run.GetID(), err)
	}
	return nil
}

// history reads a run's whole history.
func (h *harness) history(ctx context.Context, run sdkclient.WorkflowRun) ([]*historypb.HistoryEvent, error) {
	iter := h.c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var evs []*historypb.HistoryEvent
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", run.GetID(), err)
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// historyBytes is the size of a history as Temporal stores it: the sum of
// its events' protobuf sizes.
func historyBytes(evs []*historypb.HistoryEvent) int {
	n := 0
	for _, ev := range evs {
		n += proto.Size(ev)
	}
	return n
}

// events queries a prompt's events (the run may be closed).
func (h *harness) events(ctx context.Context, s settings.Settings, sess, runID string) ([]agent.Event, error) {
	return h.controller(s).Events(ctx, sess, runID, 0)
}

// parallel runs fn(0..n-1) on at most width goroutines and returns the
// first error.
func parallel(n, width int, fn func(i int) error) error {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int)
	for w := 0; w < min(width, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

func quiet() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
