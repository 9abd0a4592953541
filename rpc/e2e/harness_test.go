package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/stack"
	"github.com/durableagent/durableagent/internal/testserver"
	"github.com/durableagent/durableagent/rpc"
)

// childEnv makes the test binary run as `starter` (cli.Main with its
// arguments), so the client spawns the real RPC command line without a
// separate build.
const childEnv = "RPC_E2E_STARTER"

// latencyTarget is issue 6's bound from emission to stdout. It is
// enforced when RPC_LATENCY_STRICT=1 (a quiet machine): on a shared,
// overloaded one (load average 13 on 2 cores was seen while developing)
// every query takes hundreds of milliseconds and the bound measures the
// machine, not the mechanism. latencySanity always holds: it catches a
// stream that batches or stalls.
const (
	latencyTarget = 250 * time.Millisecond
	latencySanity = 3 * time.Second
	strictEnv     = "RPC_LATENCY_STRICT"
)

var (
	env struct {
		dataDir string
		s       settings.Settings
		stack   *stack.Stack
		err     error
	}
	envOnce sync.Once
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(cli.Main(os.Args[1:], cli.Env{}))
	}
	code := testserver.Main(m)
	if env.stack != nil {
		_ = env.stack.Close()
	}
	if env.dataDir != "" {
		_ = os.RemoveAll(env.dataDir)
	}
	os.Exit(code)
}

// server starts a worker on the package's shared server (testserver)
// once for all tests.
func server(t *testing.T) settings.Settings {
	t.Helper()
	addr := testserver.Address(t)
	envOnce.Do(func() {
		dir, err := os.MkdirTemp("", "rpc-e2e-")
		if err != nil {
			env.err = err
			return
		}
		env.dataDir = dir
		s := settings.Defaults() // the built-in settings, whatever the user's
		s.DataDir = dir
		s.Dev.Port, s.Dev.UI = 0, false
		s.Temporal.Address, s.Temporal.TaskQueue = addr, "rpc-e2e"
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		env.stack, env.err = stack.Start(ctx, s, stack.Options{Dev: true, ReuseServer: true})
		if env.err == nil {
			env.s = env.stack.Settings
		}
	})
	if env.err != nil {
		t.Fatalf("start server and worker: %v", env.err)
	}
	return env.s
}

// starterArgs are the settings flags that point a child at the test's
// server and data dir.
func starterArgs(s settings.Settings, baseDelayMs int, faults ...string) []string {
	return []string{
		"--data-dir", s.DataDir,
		"--temporal.address", s.Temporal.Address,
		"--temporal.namespace", s.Temporal.Namespace,
		"--temporal.taskQueue", s.Temporal.TaskQueue,
		"--retry.baseDelayMs", fmt.Sprint(baseDelayMs),
		"--scripted.faults", strings.Join(faults, ";"),
	}
}

// startClient runs `starter rpc --session session` with the test
// server's settings (starterArgs).
func startClient(t *testing.T, s settings.Settings, session string, baseDelayMs int, faults ...string) *proc {
	t.Helper()
	return startClientWith(t, s, session, nil, baseDelayMs, faults...)
}

// startClientWith is startClient with more settings flags (extra).
func startClientWith(t *testing.T, s settings.Settings, session string, extra []string, baseDelayMs int, faults ...string) *proc {
	t.Helper()
	return startProc(t, "", append(append([]string{"--session", session}, starterArgs(s, baseDelayMs, faults...)...), extra...)...)
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("starter stderr: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// latencies are receive time minus event time. The event time is the
// workflow task's start (workflow.Now), which precedes the emission, so
// this over-estimates the emission→stdout latency.
func (p *proc) latencies() []time.Duration {
	var out []time.Duration
	for _, l := range p.lines {
		if l.Event != nil && !rpc.ConnectionEvent(l.Event.Type) { // the connection's own events have no workflow time
			out = append(out, l.at.Sub(l.Event.Time))
		}
	}
	return out
}

// visibility records when each event of a session's latest prompt first
// answers the events query, polled every 20 ms from the test process: an
// event cannot reach any client before that, whatever the client does.
type visibility struct {
	mu    sync.Mutex
	first map[int64]time.Time
	stop  context.CancelFunc
	done  chan struct{}
}

func watchVisibility(k *client.Controller, session string) *visibility {
	ctx, cancel := context.WithCancel(context.Background())
	v := &visibility{first: map[int64]time.Time{}, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(v.done)
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			evs, _ := k.Events(ctx, session, "", 0) // not found until the prompt starts
			now := time.Now()
			v.mu.Lock()
			for _, e := range evs {
				if _, seen := v.first[e.Seq]; !seen {
					v.first[e.Seq] = now
				}
			}
			v.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return v
}

// pipeline is, per received event, its receive time minus the time it
// became queryable: the latency of the RPC path itself (events query poll,
// stdout, client), to within the 20 ms sampling.
func (v *visibility) pipeline(p *proc) []time.Duration {
	v.stop()
	<-v.done
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []time.Duration
	for _, l := range p.lines {
		if l.Event == nil || rpc.ConnectionEvent(l.Event.Type) {
			continue
		}
		var d time.Duration
		if first, ok := v.first[l.Event.Seq]; ok {
			d = max(l.at.Sub(first), 0)
		}
		out = append(out, d)
	}
	return out
}

// spread renders min, median and max of durations.
func spread(ds []time.Duration) (min, median, max time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[0], s[len(s)/2], s[len(s)-1]
}

func types(evs []agent.Event) string {
	var s []string
	for _, e := range evs {
		if contract(e) {
			s = append(s, e.Type)
		}
	}
	return strings.Join(s, " ")
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// contract says whether an event belongs to the retry contract (SPEC 10)
// whose order these tests pin: the tool loop's turn_start, turn_end,
// message_start and the user message's message_end are tested in
// workflows (TestLoop_*).
func contract(e agent.Event) bool {
	switch {
	case e.Type == agent.EventTurnStart, e.Type == agent.EventTurnEnd, e.Type == agent.EventMessageStart:
		return false
	case rpc.ConnectionEvent(e.Type):
		// The RPC connection's own events (pi 1.6), not the workflow's:
		// TestRPC_RetryChainExactEventSequence checks agent_settled ends it.
		return false
	case e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleUser:
		return false
	case e.Type == agent.EventMessageUpdate:
		// Live lines, not the workflow's events: pi 1.6's start/done/error
		// around each answer and the deltas between them (checked by
		// liveOf). How many deltas a short answer shows depends on the
		// live transport (worker --dev pushes them as they come; the
		// heartbeats may show none), so the contract's order leaves them out.
		return false
	}
	return true
}

func answerFrame(typ string) bool { return typ == "start" || typ == "done" || typ == "error" }

func contractOnly(evs []agent.Event) []agent.Event {
	var out []agent.Event
	for _, e := range evs {
		if contract(e) {
			out = append(out, e)
		}
	}
	return out
}
