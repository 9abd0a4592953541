//go:build linux

package cluster

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/pgstore"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/testserver"
)

// One cluster, three failures, in order: a worker SIGKILLed during a
// model call, the worker running a prompt SIGKILLed during its backoff,
// PostgreSQL (Temporal's and the sessions' database) restarted during a
// backoff. Each prompt completes on a surviving worker, and its session
// in the database holds every entry once.
func TestCluster_WorkersDieAndPostgresRestarts(t *testing.T) {
	c := startCluster(t)
	tc := c.client()

	t.Run("WorkerWithoutModelProviderRefusesToStart", func(t *testing.T) {
		env := c.workerEnv(t.TempDir())
		delete(env, "DURABLE_AGENT_MODEL_PROVIDER")
		cmd := exec.Command(filepath.Join(c.bin, "worker-cluster"))
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		out, err := cmd.CombinedOutput()
		msg := strings.TrimSpace(string(out))
		if code := cmd.ProcessState.ExitCode(); err == nil || code != 2 {
			t.Fatalf("exit %d (%v), want 2; output %q", code, err, msg)
		}
		if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "worker: no model provider configured") {
			t.Errorf("output %q, want one line refusing for lack of a model provider", msg)
		}
	})

	t.Run("RealWorkerRefusesTheScriptedFake", func(t *testing.T) {
		// A worker started for anthropic, on a queue of its own; the
		// starter names scripted (the compose variable set to it).
		queue := c.queue + "-anthropic"
		w := c.startWorkerEnv("worker-anthropic", map[string]string{
			"DURABLE_AGENT_MODEL_PROVIDER": "anthropic", "DURABLE_AGENT_TEMPORAL_TASKQUEUE": queue})
		defer c.stop(w, syscall.SIGKILL)
		r := c.promptEnv(map[string]string{"DURABLE_AGENT_TEMPORAL_TASKQUEUE": queue}, "refused", "answer with the fake", 500)
		r.finish(t)
		out := r.out.String() + r.err.String()
		if r.code != cli.ExitFailed || !strings.Contains(out, "model provider scripted (the offline fake) is not served by this worker: it serves anthropic, openai") {
			t.Fatalf("starter exited %d, want 1 with the worker's refusal naming its providers:\n%s", r.code, out)
		}
		if strings.Contains(out, "Scripted reply to:") {
			t.Errorf("the fake answered on an anthropic worker:\n%s", out)
		}
		t.Logf("starter naming scripted on an anthropic worker, exit %d:\n%s", r.code, out)
	})

	start := time.Now()
	c.startWorker("worker-1")
	c.startWorker("worker-2")
	c.mark("workers", start)
	c.logIdleRSS()

	t.Run("WorkerKilledDuringModelCall", func(t *testing.T) {
		start := time.Now()
		defer c.mark("kill-during-call", start)
		const id, msg = "kill-during-call", "survive a dead worker"
		r := c.prompt(id, msg, 500)
		pid := c.waitStartedActivity(tc, id, activities.CallModelName)
		victim := c.kill(pid)
		t.Logf("SIGKILLed %s (pid %d) during its model call", victim, pid)
		r.wait(t)
		c.startWorker("worker-3") // before the checks: later subtests need two workers
		last := c.activityWorkers(tc, id, activities.CallModelName)
		if len(last) < 2 || last[len(last)-1] == pid {
			t.Errorf("CallModel ran on pids %v; want the last call on the surviving worker", last)
		}
		c.checkSession(t, tc, id, msg, 1, "did not finish (heartbeat timeout")
	})

	t.Run("WorkerKilledDuringBackoff", func(t *testing.T) {
		start := time.Now()
		defer c.mark("kill-during-backoff", start)
		const id, msg = "kill-during-backoff", "survive a dead worker while waiting"
		r := c.prompt(id, msg, 3000, "503 Service Unavailable")
		c.waitBackoff(tc, id)
		pid := c.lastWorkflowWorker(tc, id)
		victim := c.kill(pid)
		t.Logf("SIGKILLed %s (pid %d, it ran the prompt's workflow) during the backoff", victim, pid)
		r.wait(t)
		c.startWorker("worker-4")
		if !strings.Contains(r.out.String(), "Retrying (1/") {
			t.Errorf("starter output lacks the retry:\n%s", r.out.String())
		}
		if last := c.lastWorkflowWorker(tc, id); last == pid {
			t.Errorf("the workflow finished on the killed worker %d", pid)
		}
		c.checkSession(t, tc, id, msg, 1, "503")
	})

	t.Run("PostgresRestartDuringBackoff", func(t *testing.T) {
		start := time.Now()
		defer c.mark("postgres-restart", start)
		const id, msg = "postgres-restart", "survive a database restart"
		r := c.prompt(id, msg, 6000, "503 Service Unavailable")
		c.waitBackoff(tc, id)
		// Down for two seconds: every pooled connection of the Temporal
		// server and of both workers breaks.
		restart := time.Now()
		if err := c.pg.Stop(); err != nil {
			t.Fatalf("stop PostgreSQL: %v", err)
		}
		time.Sleep(2 * time.Second)
		if err := c.pg.Start(); err != nil {
			t.Fatalf("start PostgreSQL: %v", err)
		}
		t.Logf("PostgreSQL was down for %.1fs during the backoff", time.Since(restart).Seconds())
		r.wait(t)
		c.checkSession(t, tc, id, msg, 1, "503")
	})

	t.Run("StarterWithOnlyTheTemporalAddress", func(t *testing.T) {
		start := time.Now()
		defer c.mark("laptop-reads", start)
		const id = "laptop"
		c.prompt(id, "count to forty", 500, `tool:bash {"command":"seq -f line%g 1 40"}`, "text:counted").wait(t)
		// A laptop: the starter binary with the cluster's address and
		// namespace (and the test's task queue), an empty home, no
		// session store or PostgreSQL variable.
		stdin := ""
		laptop := func(args ...string) (int, string, string) {
			t.Helper()
			home := t.TempDir()
			cmd := exec.Command(filepath.Join(c.bin, "starter"), args...)
			cmd.Dir, cmd.Stdin = home, strings.NewReader(stdin)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "DURABLE_AGENT_HOME=" + home,
				"TEMPORAL_ADDRESS=" + c.frontend, "TEMPORAL_NAMESPACE=" + c.namespace, "DURABLE_AGENT_TEMPORAL_TASKQUEUE=" + c.queue}
			var out, errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errOut
			_ = cmd.Run()
			return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
		}
		code, out, errOut := laptop("sessions")
		if code != 0 || !regexp.MustCompile(`(?m)^laptop  completed  .*"count to forty"$`).MatchString(out) {
			t.Fatalf("starter sessions: exit %d, want the cluster's sessions\n%s%s", code, out, errOut)
		}
		code, out, errOut = laptop("events", "--session", id, "--full")
		if code != 0 || !strings.Contains(out, "line1\n") || !strings.Contains(out, "line40\n") || strings.Contains(out, "a preview") {
			t.Fatalf("starter events --full: exit %d, want the whole tool result\n%s%s", code, out, errOut)
		}
		_, out, _ = laptop("events", "--session", id, "--json")
		entry := regexp.MustCompile(`"type":"tool_execution_end".*?"entryId":"([^"]+)"`).FindStringSubmatch(out)
		if entry == nil {
			t.Fatalf("no tool_execution_end with an entryId in the events:\n%s", out)
		}
		code, out, errOut = laptop("show", "--session", id, entry[1])
		if code != 0 || !strings.HasPrefix(out, "✓ bash (") || !strings.Contains(out, "line1\nline2\n") || !strings.Contains(out, "line40") {
			t.Fatalf("starter show %s: exit %d\n%s%s", entry[1], code, out, errOut)
		}
		code, out, errOut = laptop("session", "export", "--session", id)
		if code != 0 || !strings.HasPrefix(out, `{"type":"session"`) || !strings.Contains(out, "line40") {
			t.Fatalf("starter session export: exit %d\n%s%s", code, out, errOut)
		}
		// RPC mode (and chat) reads the session through the workers too:
		// before, it opened an empty JSONL store of its own home and
		// answered no messages.
		stdin = `{"id":"m","type":"get_messages"}` + "\n"
		code, out, errOut = laptop("rpc", "--session", id, "--workspace", filepath.Join(c.dir, "workspace"))
		if code != 0 || !strings.Contains(out, `"id":"m"`) || !strings.Contains(out, "count to forty") || !strings.Contains(out, "line40") {
			t.Fatalf("starter rpc get_messages: exit %d, want the session's messages\n%s%s", code, out, errOut)
		}
		stdin = ""
		// No worker on the queue: one line naming it, in bounded time.
		begin := time.Now()
		code, _, errOut = laptop("sessions", "--temporal.taskQueue", c.queue+"-nobody")
		if code != 2 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, `no worker polls task queue "`+c.queue+`-nobody"`) || time.Since(begin) > 30*time.Second {
			t.Fatalf("sessions without a worker: exit %d after %s, stderr %q", code, time.Since(begin), errOut)
		}
		t.Logf("a read nobody answers: %s", strings.TrimSpace(errOut))
	})

	// Tool placement. Each worker below names itself in AGENT_WORKER
	// (bash sees it), so a tool result says which worker ran it.
	for _, w := range c.workers {
		c.stop(w, syscall.SIGKILL)
	}
	bash := `tool:bash {"command":"echo ran on $AGENT_WORKER"}`

	t.Run("ToolsPlacedByHostWaitForTheirHost", func(t *testing.T) {
		start := time.Now()
		defer c.mark("placement-host", start)
		const id = "placed-by-host"
		a := c.startWorkerEnv("host-a", map[string]string{"DURABLE_AGENT_TOOLS_HOST": "host-a", "AGENT_WORKER": "host-a"})
		c.prompt(id, "create it on host-a", 500, bash, "text:created").wait(t)
		if h := c.sessionHeader(t, id); h.Host != "host-a" {
			t.Fatalf("session header host %q, want host-a (the worker that created it)", h.Host)
		}

		// host-a goes away; host-b serves the shared queue. The model
		// call runs on host-b, the tool call waits for host-a.
		b := c.startWorkerEnv("host-b", map[string]string{"DURABLE_AGENT_TOOLS_HOST": "host-b", "AGENT_WORKER": "host-b"})
		c.stop(a, syscall.SIGKILL)
		r := c.prompt(id, "run a tool while host-a is down", 500, bash, "text:done")
		st := c.waitState(tc, id, func(st agent.State) bool { return st.WaitingForHost != "" })
		if st.WaitingForHost != "host-a" || st.ToolHost != "host-a" {
			t.Fatalf("state waits for %q (tool host %q), want host-a", st.WaitingForHost, st.ToolHost)
		}
		details := c.currentDetails(tc, id)
		if !strings.Contains(details, "Waiting for workspace host host-a") {
			t.Errorf("current details %q, want them to say it waits for host-a", details)
		}
		t.Logf("while host-a is down: state waitingForHost %q, details %q", st.WaitingForHost, details)

		c.startWorkerEnv("host-a-again", map[string]string{"DURABLE_AGENT_TOOLS_HOST": "host-a", "AGENT_WORKER": "host-a-again"})
		r.wait(t)
		if got := c.toolOutputs(t, id); strings.Join(got, "|") != "ran on host-a|ran on host-a-again" {
			t.Errorf("tool results %q, want both on host-a (the second after it came back)", got)
		}
		if pids := c.activityWorkers(tc, id, activities.CallModelName); len(pids) == 0 || pids[0] != b.cmd.Process.Pid {
			t.Errorf("the second prompt's model call ran on pids %v, want host-b's %d (model calls run anywhere)", pids, b.cmd.Process.Pid)
		}
		if st, err := c.state(tc, id); err != nil || st.WaitingForHost != "" {
			t.Errorf("after the prompt: state %+v, %v; want no host waited for", st, err)
		}
	})
	for _, w := range c.workers {
		c.stop(w, syscall.SIGKILL)
	}

	t.Run("ToolsPlacedAnywhereRunOnAnyWorker", func(t *testing.T) {
		start := time.Now()
		defer c.mark("placement-any", start)
		const id = "placed-anywhere"
		any := map[string]string{"DURABLE_AGENT_TOOLS_PLACEMENT": "any"}
		with := func(name string) map[string]string {
			env := map[string]string{"AGENT_WORKER": name}
			for k, v := range any {
				env[k] = v
			}
			return env
		}
		first := c.startWorkerEnv("any-1", with("any-1"))
		c.prompt(id, "create it anywhere", 500, bash, "text:created").wait(t)
		if h := c.sessionHeader(t, id); h.Host != "" {
			t.Fatalf("session header host %q, want none under placement any", h.Host)
		}
		c.startWorkerEnv("any-2", with("any-2"))
		c.stop(first, syscall.SIGKILL)
		c.prompt(id, "run a tool on whichever worker", 500, bash, "text:done").wait(t)
		if got := c.toolOutputs(t, id); strings.Join(got, "|") != "ran on any-1|ran on any-2" {
			t.Errorf("tool results %q, want any-1's then any-2's", got)
		}
	})
	for _, w := range c.workers {
		c.stop(w, syscall.SIGKILL)
	}

	t.Run("NewSessionGoesToTheHostWithItsWorkspace", func(t *testing.T) {
		start := time.Now()
		defer c.mark("placement-choice", start)
		testNewSessionPlacement(t, c, tc, bash)
	})
}

// startWorkerEnv starts a cluster worker with extra environment.
func (c *cluster) startWorkerEnv(name string, extra map[string]string) *proc {
	c.t.Helper()
	saved := c.extraEnv
	c.extraEnv = extra
	defer func() { c.extraEnv = saved }()
	return c.startWorker(name)
}

// state queries the session's prompt state as the starter does.
func (c *cluster) state(tc client.Client, id string) (agent.State, error) {
	var st agent.State
	v, err := tc.QueryWorkflow(context.Background(), "session-"+id, "", agent.QueryState)
	if err != nil {
		return st, err
	}
	return st, v.Get(&st)
}

// waitState polls the state query until ok holds.
func (c *cluster) waitState(tc client.Client, id string, ok func(agent.State) bool) agent.State {
	c.t.Helper()
	deadline := time.Now().Add(time.Minute)
	var last agent.State
	var err error
	for time.Now().Before(deadline) {
		if last, err = c.state(tc, id); err == nil && ok(last) {
			return last
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.t.Fatalf("state of %s never matched: last %+v, %v", id, last, err)
	return last
}

// currentDetails reads the workflow's current details as the Temporal UI
// and `temporal workflow metadata` show them.
func (c *cluster) currentDetails(tc client.Client, id string) string {
	c.t.Helper()
	v, err := tc.QueryWorkflow(context.Background(), "session-"+id, "", "__temporal_workflow_metadata")
	if err != nil {
		c.t.Fatalf("metadata of %s: %v", id, err)
	}
	var md sdkpb.WorkflowMetadata
	if err := v.Get(&md); err != nil {
		c.t.Fatalf("metadata of %s: %v", id, err)
	}
	return md.GetCurrentDetails()
}

// sessionHeader reads the session's header from the database.
func (c *cluster) sessionHeader(t *testing.T, id string) session.Header {
	t.Helper()
	return c.loadSession(t, id).Header
}

// toolOutputs are the texts of the session's tool results, in order.
func (c *cluster) toolOutputs(t *testing.T, id string) []string {
	t.Helper()
	var out []string
	for _, e := range c.loadSession(t, id).Entries {
		if e.Message != nil && e.Message.Role == agent.RoleToolResult {
			out = append(out, strings.TrimSpace(e.Message.Text()))
		}
	}
	return out
}

func (c *cluster) loadSession(t *testing.T, id string) *session.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := pgstore.Open(ctx, c.sessionsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sess, err := st.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// run is a prompt sent by the starter (the starter's own code, cli.Main,
// in this process).
type run struct {
	done     chan struct{}
	code     int
	out, err bytes.Buffer
	args     []string
}

// exited says whether the starter has exited.
func (r *run) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// finish waits for the starter to exit.
func (r *run) finish(t *testing.T) {
	t.Helper()
	select {
	case <-r.done:
	case <-time.After(3 * time.Minute):
		t.Fatalf("starter %q still running after 3 minutes", r.args)
	}
}

// wait waits for the starter to exit 0.
func (r *run) wait(t *testing.T) {
	t.Helper()
	r.finish(t)
	if r.code != 0 {
		t.Fatalf("starter %q exited %d\nstdout:\n%s\nstderr:\n%s", r.args, r.code, r.out.String(), r.err.String())
	}
}

// prompt starts `starter prompt` with the compose starter's environment
// on this machine.
func (c *cluster) prompt(id, msg string, baseDelayMs int, faults ...string) *run {
	return c.promptEnv(nil, id, msg, baseDelayMs, faults...)
}

// promptEnv is prompt with extra starter environment.
func (c *cluster) promptEnv(extra map[string]string, id, msg string, baseDelayMs int, faults ...string) *run {
	ws := filepath.Join(c.dir, "workspace")
	_ = os.MkdirAll(ws, 0o755)
	args := []string{"prompt", "--session", id, "--workspace", ws, "--retry.baseDelayMs", strconv.Itoa(baseDelayMs)}
	for _, k := range settings.Keys() {
		if v, ok := extra[k.Env]; ok {
			args = append(args, k.Flag, v)
		}
	}
	for k, v := range extra { // starter flags: --host, another --workspace
		if strings.HasPrefix(k, "--") {
			args = append(args, k, v)
		}
	}
	for _, f := range faults {
		args = append(args, "--fault", f)
	}
	return c.starter(strings.NewReader(""), nil, append(args, msg)...)
}

// starter runs the starter's own code (cli.Main) with the compose
// starter's environment on this machine; its output goes to out (nil:
// the run's buffer).
func (c *cluster) starter(stdin io.Reader, out io.Writer, args ...string) *run {
	env := map[string]string{}
	for k, v := range c.compose.Services["starter"].Environment {
		env[k] = resolve(v)
	}
	home := filepath.Join(c.dir, "starter")
	env["TEMPORAL_ADDRESS"] = c.frontend
	env["DURABLE_AGENT_HOME"] = home
	env["DURABLE_AGENT_SESSION_POSTGRESURL"] = c.sessionsURL
	env["DURABLE_AGENT_MODEL_PROVIDER"] = "scripted"
	env["DURABLE_AGENT_TEMPORAL_TASKQUEUE"] = c.queue
	env["DURABLE_AGENT_MODEL_HEARTBEATTIMEOUTMS"] = strconv.Itoa(heartbeatTimeoutMs)
	env["DURABLE_AGENT_TOOLS_HOSTWAITMS"] = "1000"
	// The settings read the process environment, which every run of the
	// cluster shares; what differs between runs goes as flags.
	testserver.SetEnv(c.t, env)
	r := &run{done: make(chan struct{}), args: args}
	if out == nil {
		out = &r.out
	}
	go func() {
		defer close(r.done)
		r.code = cli.Main(r.args, cli.Env{Stdout: out, Stderr: &r.err, Stdin: stdin})
	}()
	return r
}

// waitStartedActivity waits until the session's workflow runs activity
// name on a worker and returns that worker's pid.
func (c *cluster) waitStartedActivity(tc client.Client, id, name string) int {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for {
		d, err := tc.DescribeWorkflowExecution(ctx, "session-"+id, "")
		if err == nil {
			for _, pa := range d.GetPendingActivities() {
				if pa.GetActivityType().GetName() == name && pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
					return pidOf(c.t, pa.GetLastWorkerIdentity())
				}
			}
		}
		if ctx.Err() != nil {
			c.t.Fatalf("no %s started for %s: %v", name, id, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// history returns the events of the session's current run.
func (c *cluster) history(tc client.Client, id string) []*historypb.HistoryEvent {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	it := tc.GetWorkflowHistory(ctx, "session-"+id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var events []*historypb.HistoryEvent
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			c.t.Fatalf("history of %s: %v", id, err)
		}
		events = append(events, e)
	}
	return events
}

// waitBackoff waits for the durable timer of a retry backoff.
func (c *cluster) waitBackoff(tc client.Client, id string) {
	c.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if _, err := tc.DescribeWorkflowExecution(context.Background(), "session-"+id, ""); err == nil {
			for _, e := range c.history(tc, id) {
				if e.GetEventType() == enumspb.EVENT_TYPE_TIMER_STARTED {
					return
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.t.Fatalf("no backoff timer started for %s", id)
}

// lastWorkflowWorker is the pid of the worker that ran the session's
// latest workflow task (the one with the workflow in its cache).
func (c *cluster) lastWorkflowWorker(tc client.Client, id string) int {
	c.t.Helper()
	pid := 0
	for _, e := range c.history(tc, id) {
		if a := e.GetWorkflowTaskStartedEventAttributes(); a != nil {
			pid = pidOf(c.t, a.GetIdentity())
		}
	}
	if pid == 0 {
		c.t.Fatalf("no workflow task of %s started", id)
	}
	return pid
}

// activityWorkers are the pids that started activity name, in order.
func (c *cluster) activityWorkers(tc client.Client, id, name string) []int {
	c.t.Helper()
	events := c.history(tc, id)
	scheduled := map[int64]bool{}
	var pids []int
	for _, e := range events {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == name {
			scheduled[e.GetEventId()] = true
		}
		if a := e.GetActivityTaskStartedEventAttributes(); a != nil && scheduled[a.GetScheduledEventId()] {
			pids = append(pids, pidOf(c.t, a.GetIdentity()))
		}
	}
	return pids
}

// pidOf reads the pid from an SDK worker identity ("pid@host@...").
func pidOf(t *testing.T, identity string) int {
	p, _, _ := strings.Cut(identity, "@")
	pid, err := strconv.Atoi(p)
	if err != nil {
		t.Fatalf("worker identity %q names no pid", identity)
	}
	return pid
}

// checkSession reads the session from the database and holds it against
// what the prompt must have left, entry for entry: the user message, then
// one entry per model call the workflow made (its history records each
// call's entry id), in that order and nothing else — wantErrors failed
// calls and the answer, each a child of the user message (a retry starts
// again from the question; failed calls stay off the answer's branch). A
// message written twice under new ids, a stray write or a lost entry
// fails it.
func (c *cluster) checkSession(t *testing.T, tc client.Client, id, msg string, wantErrors int, errText string) {
	t.Helper()
	sess := c.loadSession(t, id)
	// The session's system prompt record comes first (spec 7.6), and the
	// user message is its child.
	entries, root := sess.Entries, ""
	if len(entries) > 0 && entries[0].Type == session.TypeCustom && entries[0].CustomType == session.CustomSystemPrompt {
		entries, root = entries[1:], entries[0].ID
	} else {
		t.Errorf("session %s does not start with its system prompt record", id)
	}
	var dump, stored []string
	for _, e := range entries {
		dump = append(dump, fmt.Sprintf("%s(parent %s, %s)", e.ID, e.ParentID, describe(e)))
		stored = append(stored, e.ID)
	}
	t.Logf("session %s in the database: %s", id, strings.Join(dump, "; "))

	calls := c.modelCalls(tc, id)
	if len(entries) == 0 || len(calls) != wantErrors+1 {
		t.Fatalf("session %s: %d entries, %d model calls in history; want %d calls:\n%s", id, len(entries), len(calls), wantErrors+1, strings.Join(dump, "\n"))
	}
	user := entries[0]
	want := []string{user.ID}
	for _, in := range calls {
		want = append(want, in.EntryID)
		if in.LeafID != user.ID {
			t.Errorf("model call %s ran on leaf %s, want the user message %s", in.EntryID, in.LeafID, user.ID)
		}
	}
	if strings.Join(stored, " ") != strings.Join(want, " ") {
		t.Fatalf("session %s stores %v; want the user message and the workflow's model calls %v, each once", id, stored, want)
	}
	if m := user.Message; m == nil || m.Role != agent.RoleUser || m.Text() != msg || user.ParentID != root {
		t.Errorf("first entry %s, want the user message %q under the system prompt record", describe(user), msg)
	}
	for i, e := range entries[1:] {
		m := e.Message
		switch {
		case e.ParentID != user.ID:
			t.Errorf("entry %s has parent %q, want the user message %s", e.ID, e.ParentID, user.ID)
		case m == nil || m.Role != agent.RoleAssistant:
			t.Errorf("entry %s is %s, want an assistant message", e.ID, describe(e))
		case i < wantErrors && (m.StopReason != agent.StopReasonError || !strings.Contains(m.ErrorMessage, errText)):
			t.Errorf("entry %s is %s, want a failed call mentioning %q", e.ID, describe(e), errText)
		case i == wantErrors && (m.StopReason == agent.StopReasonError || m.Text() != "Scripted reply to: "+msg):
			t.Errorf("entry %s is %s, want the answer", e.ID, describe(e))
		}
	}
	if leaf := sess.LeafID(); leaf != want[len(want)-1] {
		t.Errorf("leaf %s, want the answer %s", leaf, want[len(want)-1])
	}
	if got := sess.Context(sess.LeafID()); len(got) != 2 || got[0].Role != agent.RoleUser {
		t.Errorf("run context of the answer has %d messages, want the question and the answer", len(got))
	}
}

// modelCalls are the inputs of the session's CallModel activities, in
// the order the workflow scheduled them.
func (c *cluster) modelCalls(tc client.Client, id string) []activities.CallModelInput {
	c.t.Helper()
	var out []activities.CallModelInput
	for _, e := range c.history(tc, id) {
		a := e.GetActivityTaskScheduledEventAttributes()
		if a == nil || a.GetActivityType().GetName() != activities.CallModelName {
			continue
		}
		var in activities.CallModelInput
		if err := converter.GetDefaultDataConverter().FromPayloads(a.GetInput(), &in); err != nil {
			c.t.Fatalf("decode CallModel input of %s: %v", id, err)
		}
		out = append(out, in)
	}
	return out
}

func describe(e session.Entry) string {
	if e.Message == nil {
		return e.Type
	}
	if e.Message.ErrorMessage != "" {
		return string(e.Message.Role) + " error: " + e.Message.ErrorMessage
	}
	return string(e.Message.Role) + ": " + e.Message.Text()
}

// logIdleRSS records the resident memory of the idle cluster workers.
func (c *cluster) logIdleRSS() {
	time.Sleep(time.Second)
	for _, w := range c.workers {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", w.cmd.Process.Pid))
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "VmRSS:") {
				c.t.Logf("%s idle %s", w.name, strings.Join(strings.Fields(l), " "))
			}
		}
	}
}
