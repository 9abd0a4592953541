package faults

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/devserver"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/testserver"
	"github.com/durableagent/durableagent/workflows"
)

// Child modes: the test binary re-executed as a worker or as an embedded
// server, so that a test can SIGKILL it.
const (
	envChild     = "FAULTS_CHILD" // "worker" or "server"
	envAddr      = "FAULTS_ADDR"
	envQueue     = "FAULTS_QUEUE"
	envData      = "FAULTS_DATA"
	envLatencyMs = "FAULTS_LATENCY_MS"
	envNobody    = "FAULTS_NOBODY" // "1": the worker drops root to uid/gid 65534
	envSrvDir    = "FAULTS_SERVER_DIR"
	envSrvPort   = "FAULTS_SERVER_PORT"
	// envDieBefore names a tool: the worker child SIGKILLs itself when it
	// is about to write that tool's result (after the tool's effect,
	// before its result exists anywhere): a kill placed exactly there.
	envDieBefore = "FAULTS_DIE_BEFORE_RESULT"
)

// Lines a worker child prints around every model call.
const (
	callBegin = "call-begin"
	callEnd   = "call-end"
)

// readyPrefix starts the line a child prints on stdout once it serves.
const readyPrefix = "ready "

// nobody is the uid and gid a worker child drops to so that file modes
// apply to it even when the tests run as root.
const nobody = 65534

func TestMain(m *testing.M) {
	switch os.Getenv(envChild) {
	case "worker":
		os.Exit(workerChild())
	case "server":
		os.Exit(serverChild())
	case "starter":
		os.Exit(starterChild())
	}
	// The tests marked alongside mostly wait on timeouts and killed
	// workers: up to six run at once unless -test.parallel says otherwise
	// (its default, GOMAXPROCS, is 2 on the CI machine).
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", "6")
	}
	os.Exit(testserver.Main(m))
}

func quiet() *slog.Logger { return testserver.Quiet() }

// waitForSignal blocks until SIGTERM or SIGINT (a SIGKILL just ends the
// process, which is the point).
func waitForSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	<-ch
}

// workerChild runs a worker until it is killed or told to stop.
func workerChild() int {
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stderr, "worker child: %s: %v\n", what, err)
		return 2
	}
	s := settings.Defaults()
	s.DataDir = os.Getenv(envData)
	s.Temporal.Address = os.Getenv(envAddr)
	s.Temporal.TaskQueue = os.Getenv(envQueue)
	if ms, err := strconv.ParseInt(os.Getenv(envLatencyMs), 10, 64); err == nil {
		s.Scripted.LatencyMs = ms
	}
	c, err := client.Dial(context.Background(), s, quiet())
	if err != nil {
		return fail("dial", err)
	}
	// Log every model call's start and end on stdout, unbuffered: after a
	// SIGKILL the parent reads whether the worker died inside a call.
	w, err := app.NewWorker(c, s, app.Extensions{
		Activities: func(acts *activities.Activities) {
			if tool := os.Getenv(envDieBefore); tool != "" {
				acts.Sessions = dieBeforeResult{Backend: acts.Sessions, tool: tool}
			}
		},
		Interceptors: []interceptor.WorkerInterceptor{&callLog{}},
	})
	if err != nil {
		return fail("worker", err)
	}
	if err := w.Start(); err != nil {
		return fail("start worker", err)
	}
	// Drop root only now: the SDK reads the executable (a checksum) when
	// the worker starts, and the test binary's directory is root's. The
	// session files are opened per call, so every call runs as nobody.
	if os.Getenv(envNobody) == "1" && os.Geteuid() == 0 {
		if err := dropRoot(); err != nil {
			return fail("drop root", err)
		}
	}
	fmt.Printf("%sworker pid %d\n", readyPrefix, os.Getpid())
	waitForSignal()
	w.Stop()
	c.Close()
	return 0
}

func dropRoot() error {
	if err := syscall.Setgroups(nil); err != nil {
		return err
	}
	if err := syscall.Setgid(nobody); err != nil {
		return err
	}
	return syscall.Setuid(nobody)
}

// serverChild runs the embedded server on a fixed port and data dir until
// it is killed or told to stop.
func serverChild() int {
	port, err := strconv.Atoi(os.Getenv(envSrvPort))
	if err != nil {
		fmt.Fprintf(os.Stderr, "server child: bad port: %v\n", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	srv, err := devserver.Start(ctx, devserver.Options{
		DataDir: os.Getenv(envSrvDir), Port: port, UIPort: devserver.NoUI, Logger: quiet(),
	})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "server child: %v\n", err)
		return 2
	}
	fmt.Printf("%s%s\n", readyPrefix, srv.FrontendAddress())
	waitForSignal()
	if err := srv.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "server child: stop: %v\n", err)
		return 1
	}
	return 0
}

func skipShort(t *testing.T) {
	t.Helper()
	testserver.SkipShort(t)
}

// alongside marks a test that mostly waits (SIGKILL trial batches, CLI
// followers through an outage) to run in parallel with the others marked
// so, once the package's sequential tests are done: those watch
// heartbeat and model timeouts of a second or two, or run a server of
// their own, and keep the machine to themselves. Each test has its own
// task queue, data dir and session ids on the shared server (newEnv), so
// nothing but CPU is shared.
func alongside(t *testing.T) {
	t.Helper()
	skipShort(t)
	t.Parallel()
}

// sharedAddress is the package's shared embedded server (testserver),
// in the test process, for the tests that do not kill it.
func sharedAddress(t *testing.T) string { return testserver.Address(t) }

// env is the product's settings and a client for one test.
type env struct {
	t *testing.T
	s settings.Settings
	c sdkclient.Client
	k *client.Controller
}

// newEnv points fresh settings (own task queue and data dir) at addr.
func newEnv(t *testing.T, addr string) *env {
	t.Helper()
	e := &env{t: t, s: settings.Defaults()}
	e.s.DataDir = t.TempDir()
	e.s.Temporal.Address = addr
	e.s.Temporal.TaskQueue = testserver.Queue("faults")
	e.s.Model.HeartbeatTimeoutMs = 1000
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, e.s, quiet())
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	e.c = c
	e.k = &client.Controller{Client: c, TaskQueue: e.s.Temporal.TaskQueue}
	t.Cleanup(c.Close)
	return e
}

// startWorker runs a worker in the test process until the test ends.
func (e *env) startWorker() {
	e.t.Helper()
	w, err := app.NewWorker(e.c, e.s)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Stop)
}

// prompt starts a prompt with a fault script and the settings' retry,
// heartbeat and model timeouts.
func (e *env) prompt(sessionID string, faults ...string) sdkclient.WorkflowRun {
	e.t.Helper()
	in := client.PromptInput(e.s, sessionID, "fix the failing test")
	in.Model.Faults = faults
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		e.t.Fatalf("start prompt in %s: %v", sessionID, err)
	}
	return run
}

// result waits for a prompt to end.
func (e *env) result(run sdkclient.WorkflowRun, timeout time.Duration) (workflows.PromptResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return client.Result(ctx, e.c.GetWorkflow(ctx, run.GetID(), run.GetRunID()))
}

func (e *env) events(sessionID string) []agent.Event {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	evs, err := e.k.Events(ctx, sessionID, "", 0)
	if err != nil {
		e.t.Fatalf("events of %s: %v", sessionID, err)
	}
	return evs
}

// waitFor polls the events query until an event matches.
func (e *env) waitFor(sessionID string, timeout time.Duration, match func(agent.Event) bool) agent.Event {
	e.t.Helper()
	return testserver.WaitEvent(e.t, e.k, sessionID, timeout, match)
}

// waitStreaming polls the state query until the model call is in flight.
func (e *env) waitStreaming(sessionID string, timeout time.Duration) {
	e.t.Helper()
	testserver.WaitFor(e.t, timeout, "session "+sessionID+" streaming its model call", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		st, err := e.k.State(ctx, sessionID)
		return err == nil && st.IsStreaming
	})
}

// historyOf returns a workflow's history events.
func historyOf(c sdkclient.Client, workflowID, runID string) ([]*historypb.HistoryEvent, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	iter := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var out []*historypb.HistoryEvent
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", workflowID, err)
		}
		out = append(out, ev)
	}
	return out, nil
}

func history(t *testing.T, c sdkclient.Client, workflowID, runID string) []*historypb.HistoryEvent {
	t.Helper()
	evs, err := historyOf(c, workflowID, runID)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// workflowTaskFailures lists the WorkflowTaskFailed events of a history: a
// workflow whose tasks fail (a panic, non-determinism, an undecodable
// input) is stuck, not progressing.
func workflowTaskFailures(evs []*historypb.HistoryEvent) []string {
	var out []string
	for _, ev := range evs {
		if a := ev.GetWorkflowTaskFailedEventAttributes(); a != nil {
			out = append(out, fmt.Sprintf("event %d: %s: %s", ev.GetEventId(), a.GetCause(), a.GetFailure().GetMessage()))
		}
	}
	return out
}

func typesOf(evs []agent.Event) string {
	var b []string
	for _, ev := range evs {
		b = append(b, ev.Type)
	}
	return strings.Join(b, ",")
}

// sessionFile is what a session file holds: the entries Load returns, its
// warnings, and the number of entry lines (Load hides duplicates, so they
// are counted in the raw file). The record of the session's system prompt,
// written before the first user message (docs/spec.md 7.6), is kept apart:
// entries and lines are what the prompts wrote.
type sessionFile struct {
	systemPrompt *session.Entry
	entries      []session.Entry
	warnings     []string
	lines        int
	raw          []byte
}

func loadSessionFile(dataDir, id string) (sessionFile, error) {
	store, err := session.Open(filepath.Join(dataDir, "sessions"))
	if err != nil {
		return sessionFile{}, err
	}
	sess, err := store.Load(id)
	if err != nil {
		return sessionFile{}, err
	}
	raw, err := os.ReadFile(store.Path(id))
	if err != nil {
		return sessionFile{}, err
	}
	f := sessionFile{entries: sess.Entries, warnings: sess.Warnings, lines: bytes.Count(raw, []byte("\n")) - 1, raw: raw}
	if len(f.entries) > 0 && f.entries[0].Type == session.TypeCustom && f.entries[0].CustomType == session.CustomSystemPrompt {
		f.systemPrompt, f.entries, f.lines = &f.entries[0], f.entries[1:], f.lines-1
		if len(f.entries) > 0 && f.entries[0].ParentID != f.systemPrompt.ID {
			return f, fmt.Errorf("session %s: first message %s is not the system prompt record's child", id, f.entries[0].ID)
		}
	}
	return f, nil
}

func readSession(t *testing.T, dataDir, id string) sessionFile {
	t.Helper()
	f, err := loadSessionFile(dataDir, id)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// child is a re-executed test binary in a child mode.
type child struct {
	cmd    *exec.Cmd
	ready  string // the rest of its ready line
	stderr *syncBuffer
	// out collects the stdout lines after the ready line; outDone is
	// closed when the child's stdout has ended (it exited).
	out     *syncBuffer
	outDone chan struct{}
	done    chan struct{}
}

// spawnChild starts a child and waits for its ready line. It may be
// called from any goroutine; the caller kills the child.
func spawnChild(timeout time.Duration, vars ...string) (*child, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), vars...)
	ch := &child{cmd: cmd, stderr: &syncBuffer{}, out: &syncBuffer{}, outDone: make(chan struct{}), done: make(chan struct{})}
	cmd.Stderr = ch.stderr
	// A pipe of our own: everything the child wrote before it died stays
	// readable after its death (exec's StdoutPipe is closed by Wait).
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	w.Close()
	first := make(chan string, 1)
	go func() {
		defer close(ch.outDone)
		defer r.Close()
		br := bufio.NewReader(r)
		line, _ := br.ReadString('\n')
		first <- line
		_, _ = io.Copy(ch.out, br)
	}()
	go func() { _ = cmd.Wait(); close(ch.done) }()
	select {
	case line := <-first:
		rest, ok := strings.CutPrefix(line, readyPrefix)
		if !ok {
			ch.kill()
			return nil, fmt.Errorf("child %v did not start: %q\n%s", vars, line, ch.stderr.String())
		}
		ch.ready = strings.TrimSpace(rest)
		return ch, nil
	case <-time.After(timeout):
		ch.kill()
		return nil, fmt.Errorf("child %v not ready within %v\n%s", vars, timeout, ch.stderr.String())
	}
}

// spawn is spawnChild for the test goroutine: the child is killed when
// the test ends, and its stderr shown if the test failed.
func spawn(t *testing.T, timeout time.Duration, vars ...string) *child {
	t.Helper()
	ch, err := spawnChild(timeout, vars...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ch.kill()
		if t.Failed() && ch.stderr.Len() > 0 {
			t.Logf("child %d stderr:\n%s", ch.cmd.Process.Pid, ch.stderr.String())
		}
	})
	return ch
}

// kill sends SIGKILL and waits until the process is gone.
func (c *child) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
	<-c.outDone
}

// alive reports whether the child process is still running.
func (c *child) alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// lines returns what the child printed after its ready line.
func (c *child) lines() []string {
	out := strings.TrimSuffix(c.out.String(), "\n")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// workerVars are the environment of a worker child serving queue.
func workerVars(s settings.Settings, queue string, latencyMs int, extra ...string) []string {
	return append([]string{envChild + "=worker", envAddr + "=" + s.Temporal.Address,
		envQueue + "=" + queue, envData + "=" + s.DataDir,
		envLatencyMs + "=" + strconv.Itoa(latencyMs)}, extra...)
}

// spawnWorker runs a worker child on the env's task queue and data dir.
func (e *env) spawnWorker(latencyMs int, extra ...string) *child {
	e.t.Helper()
	return spawn(e.t, 60*time.Second, workerVars(e.s, e.s.Temporal.TaskQueue, latencyMs, extra...)...)
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

// callLog prints callBegin and callEnd around every model call.
type callLog struct {
	interceptor.WorkerInterceptorBase
}

func (*callLog) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &callLogActivity{}
	i.Next = next
	return i
}

type callLogActivity struct {
	interceptor.ActivityInboundInterceptorBase
}

func (a *callLogActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (interface{}, error) {
	var call activities.CallModelInput
	ok := len(in.Args) == 1
	if ok {
		call, ok = in.Args[0].(activities.CallModelInput)
	}
	if !ok {
		return a.Next.ExecuteActivity(ctx, in)
	}
	fmt.Printf("%s %s\n", callBegin, call.EntryID)
	res, err := a.Next.ExecuteActivity(ctx, in)
	fmt.Printf("%s %s\n", callEnd, call.EntryID)
	return res, err
}

// dieAfterUser as envDieBefore's value kills the worker right after it
// wrote a prompt's user message (inside the first workflow task's local
// activity, before that task completed).
const dieAfterUser = "user-message"

// dieBeforeResult is a session store that kills its process when asked to
// write a result of tool (see envDieBefore).
type dieBeforeResult struct {
	session.Backend
	tool string
}

func (d dieBeforeResult) Append(sessionID string, entries ...session.Entry) (int, error) {
	if d.tool == dieAfterUser {
		n, err := d.Backend.Append(sessionID, entries...)
		for _, e := range entries {
			if e.Message != nil && e.Message.Role == agent.RoleUser {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
		}
		return n, err
	}
	for _, e := range entries {
		if e.Message != nil && e.Message.Role == agent.RoleToolResult && e.Message.ToolName == d.tool {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
	return d.Backend.Append(sessionID, entries...)
}
