package integration

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/egress"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/testserver"
	"github.com/durableagent/durableagent/workflows"
)

// Environment variables that turn the test binary into a worker process
// (for the test that SIGKILLs a worker mid-call).
const (
	envWorkerMode = "DURABLE_AGENT_TEST_WORKER"
	envWorkerAddr = "DURABLE_AGENT_TEST_ADDR"
	envWorkerQ    = "DURABLE_AGENT_TEST_QUEUE"
	envWorkerData = "DURABLE_AGENT_TEST_DATA"
	envWorkerMCP  = "DURABLE_AGENT_TEST_MCP" // its mcp.servers
)

func TestMain(m *testing.M) {
	// The workers here are this binary: an allowlist sandbox runs it as
	// its egress bridge.
	egress.MaybeRunBridge(os.Args[1:])
	if os.Getenv(envWorkerMode) == "1" {
		os.Exit(runWorkerProcess())
	}
	if os.Getenv(envConformanceClient) == "1" {
		os.Exit(conformanceClient(os.Getenv("MCP_CONFORMANCE_SCENARIO"), os.Args[len(os.Args)-1]))
	}
	os.Exit(testserver.Main(m))
}

// runWorkerProcess is a worker in a child process, killed by its test.
func runWorkerProcess() int {
	s := settings.Defaults()
	s.DataDir = os.Getenv(envWorkerData)
	s.Temporal.Address = os.Getenv(envWorkerAddr)
	s.Temporal.TaskQueue = os.Getenv(envWorkerQ)
	s.MCP.Servers = os.Getenv(envWorkerMCP)
	if m := os.Getenv(envSandboxMode); m != "" {
		s.Tools.Sandbox.Mode = m
	}
	c, err := client.Dial(context.Background(), s, quiet())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	w, err := app.NewWorker(c, s)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := w.Run(worker.InterruptCh()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func quiet() *slog.Logger { return testserver.Quiet() }

func skipShort(t *testing.T) {
	t.Helper()
	testserver.SkipShort(t)
}

// env is the product's settings (a data dir and a task queue of the
// test's own) pointing at the package's shared embedded server.
type env struct {
	t       *testing.T
	dataDir string
	s       settings.Settings
	c       sdkclient.Client
	k       *client.Controller
	w       worker.Worker
	// ext are the extensions startWorker builds the worker with.
	ext app.Extensions
}

func newEnv(t *testing.T) *env {
	t.Helper()
	skipShort(t)
	e := &env{t: t, s: settings.Defaults()}
	e.s.Temporal.Address = testserver.Address(t)
	e.s.DataDir = t.TempDir()
	e.s.Temporal.TaskQueue = testserver.Queue("it")
	e.dataDir = e.s.DataDir
	e.s.Retry.BaseDelayMs = 500
	e.s.Model.HeartbeatTimeoutMs = 2000
	e.startServer()
	t.Cleanup(e.close)
	return e
}

// startServer connects the env to the shared server, starting it if a
// test stopped it (stopServer).
func (e *env) startServer() {
	e.t.Helper()
	e.s.Temporal.Address = testserver.Address(e.t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, e.s, quiet())
	if err != nil {
		e.t.Fatalf("dial: %v", err)
	}
	e.c = c
	e.k = &client.Controller{Client: c, TaskQueue: e.s.Temporal.TaskQueue}
}

func (e *env) startWorker() {
	e.t.Helper()
	w, err := app.NewWorker(e.c, e.s, e.ext)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.w = w
}

func (e *env) stopWorker() {
	if e.w != nil {
		e.w.Stop()
		e.w = nil
	}
}

// stopServer stops the worker, the client and the shared server (whose
// state survives: startServer starts it again on the same port).
func (e *env) stopServer() {
	e.stopWorker()
	if e.c != nil {
		e.c.Close()
		e.c = nil
	}
	if err := testserver.Stop(); err != nil {
		e.t.Errorf("stop server: %v", err)
	}
}

// terminateOpen terminates the workflows still running on taskQueue: a
// test's leftovers, which a later test reusing a session id (so a
// workflow id) would otherwise join on the shared server.
func terminateOpen(t testing.TB, c sdkclient.Client, taskQueue string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
		Query: fmt.Sprintf("TaskQueue = %q AND ExecutionStatus = 'Running'", taskQueue),
	})
	if err != nil {
		t.Logf("list the workflows left on %s: %v", taskQueue, err)
		return
	}
	for _, ex := range resp.GetExecutions() {
		id := ex.GetExecution().GetWorkflowId()
		if err := c.TerminateWorkflow(ctx, id, "", "test ended"); err != nil {
			t.Logf("terminate %s: %v", id, err)
		}
	}
}

// close ends what the test leaves running on the shared server (its
// workflows, which the next test's same session ids would otherwise meet)
// and its worker and client.
func (e *env) close() {
	if e.c != nil {
		terminateOpen(e.t, e.c, e.s.Temporal.TaskQueue)
	}
	e.stopWorker()
	if e.c != nil {
		e.c.Close()
		e.c = nil
	}
}

func (e *env) prompt(session string, faults ...string) sdkclient.WorkflowRun {
	e.t.Helper()
	in := client.PromptInput(e.s, session, "fix the bug")
	in.Model.Faults = faults
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		e.t.Fatalf("start prompt: %v", err)
	}
	return run
}

// waitEvent polls the events query until an event matches (or fails).
func (e *env) waitEvent(session string, timeout time.Duration, match func(agent.Event) bool) agent.Event {
	e.t.Helper()
	return testserver.WaitEvent(e.t, e.k, session, timeout, match)
}

func isType(typ string) func(agent.Event) bool {
	return func(ev agent.Event) bool { return ev.Type == typ }
}

// result waits for a prompt's result.
func (e *env) result(run sdkclient.WorkflowRun) (workflows.PromptResult, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r := e.c.GetWorkflow(ctx, run.GetID(), run.GetRunID())
	return client.Result(ctx, r)
}

func (e *env) events(session string) []agent.Event {
	e.t.Helper()
	evs, err := e.k.Events(context.Background(), session, "", 0)
	if err != nil {
		e.t.Fatalf("events: %v", err)
	}
	return evs
}

func typesOf(evs []agent.Event) string {
	var b []string
	for _, ev := range evs {
		if contract(ev) {
			b = append(b, ev.Type)
		}
	}
	return strings.Join(b, ",")
}

// spawnWorker runs a worker in a child process (the test binary itself).
func (e *env) spawnWorker() *exec.Cmd {
	e.t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(),
		envWorkerMode+"=1", envWorkerAddr+"="+e.s.Temporal.Address,
		envWorkerQ+"="+e.s.Temporal.TaskQueue, envWorkerData+"="+e.dataDir)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd
}

// contract says whether an event belongs to the retry contract (SPEC 10)
// whose order these tests pin: the tool loop's turn_start, turn_end,
// message_start and the user message's message_end are tested in
// workflows (TestLoop_*).
func contract(e agent.Event) bool {
	switch {
	case e.Type == agent.EventTurnStart, e.Type == agent.EventTurnEnd, e.Type == agent.EventMessageStart:
		return false
	case e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleUser:
		return false
	}
	return true
}
