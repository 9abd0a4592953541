package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/testserver"
)

// envStarterArgs holds the JSON list of arguments of a starter child.
const envStarterArgs = "FAULTS_STARTER_ARGS"

// starterChild is the starter CLI in a process of its own (the test binary
// re-executed), so its exit code, stderr and SIGINT are the real ones.
func starterChild() int {
	var args []string
	if err := json.Unmarshal([]byte(os.Getenv(envStarterArgs)), &args); err != nil {
		fmt.Fprintf(os.Stderr, "starter child: bad %s: %v\n", envStarterArgs, err)
		return 100
	}
	return cli.Main(args, cli.Env{})
}

// starterProc is a running starter child.
type starterProc struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{}
	code           int
}

// starter runs `starter ARGS...` as a process against the env's server,
// task queue and data dir.
func (e *env) starter(args ...string) *starterProc {
	e.t.Helper()
	return e.starterIn(nil, args...)
}

// starterIn is starter with stdin read from in (nil: /dev/null).
func (e *env) starterIn(in io.Reader, args ...string) *starterProc {
	e.t.Helper()
	js, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envChild+"=starter", envStarterArgs+"="+string(js),
		"DURABLE_AGENT_HOME="+e.s.DataDir, "TEMPORAL_ADDRESS="+e.s.Temporal.Address,
		"DURABLE_AGENT_TEMPORAL_TASKQUEUE="+e.s.Temporal.TaskQueue)
	p := &starterProc{cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() {
		_ = cmd.Wait()
		p.code = cmd.ProcessState.ExitCode()
		close(p.done)
	}()
	e.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		if e.t.Failed() {
			e.t.Logf("starter %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, p.code, p.stdout.String(), p.stderr.String())
		}
	})
	return p
}

func (p *starterProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits for the process to exit and returns its exit code.
func (p *starterProc) wait(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(timeout):
		t.Fatalf("starter %v still running after %v\nstderr:\n%s", p.cmd.Args, timeout, p.stderr.String())
		return -1
	}
}

// Issue 15 item 1: `starter prompt` and `starter events --follow`, run as
// processes, keep following while the only worker is SIGKILLed and stays
// away for longer than any query timeout (Temporal stays up): no exit, no
// raw deadline error, one line on stderr that no worker answers; when a
// worker returns they print the answer and exit 0. (Before the fix both
// exited 2 with "query events of session X: context deadline exceeded"
// about 10 s after the worker died.)
func TestFaults_FollowersWaitThroughAWorkerOutage(t *testing.T) {
	alongside(t)
	e := newEnv(t, sharedAddress(t))
	w := e.spawnWorker(0)
	session := testserver.Session("outage-cli")
	prompt := e.starter("prompt", "--session", session, "--retry.baseDelayMs", "8000", "--fault", "503 Service Unavailable", "fix it")
	e.waitFor(session, 60*time.Second, func(ev agent.Event) bool { return ev.Type == agent.EventAutoRetryStart })
	events := e.starter("events", "--session", session, "--follow")
	time.Sleep(time.Second)

	w.kill()
	killed := time.Now()
	time.Sleep(20 * time.Second)
	for name, p := range map[string]*starterProc{"prompt": prompt, "events --follow": events} {
		if p.exited() {
			t.Fatalf("starter %s exited %d within %s of the worker's death (Temporal is up)\nstderr:\n%s",
				name, p.code, time.Since(killed).Round(time.Second), p.stderr.String())
		}
	}

	e.spawnWorker(0)
	for name, p := range map[string]*starterProc{"prompt": prompt, "events --follow": events} {
		code := p.wait(t, 90*time.Second)
		out, stderr := p.stdout.String(), p.stderr.String()
		t.Logf("starter %s: exit %d after %s; stderr:\n%s", name, code, time.Since(killed).Round(time.Second), stderr)
		if code != cli.ExitOK || !strings.Contains(out, "Scripted reply to: fix it") || !strings.Contains(out, "Retry succeeded on attempt 1") {
			t.Fatalf("starter %s: exit %d, want 0 with the answer\nstdout:\n%s", name, code, out)
		}
		waits := strings.Count(stderr, "starter: no worker is answering for session "+session+"; waiting (the prompt is durable)\n")
		if waits != 1 || !strings.Contains(stderr, "starter: following session "+session+" again\n") {
			t.Fatalf("starter %s: the wait was told %d times (want once) and its end %t\nstderr:\n%s",
				name, waits, strings.Contains(stderr, "again"), stderr)
		}
		if strings.Contains(stderr, "deadline") {
			t.Fatalf("starter %s printed a raw deadline error:\n%s", name, stderr)
		}
	}
}

// Issue 15 item 5, spec 13.11.4: a prompt terminated through Temporal (no prompt_end is
// ever emitted) ends `starter prompt` and `starter events --follow` within
// seconds, exit 1, with one line saying it was terminated; `starter state`
// says terminated, nothing retrying; `events --follow --after N` at or
// past the end returns at once; Ctrl-C after a terminate does not say the
// prompt keeps running.
func TestFaults_TerminatedPromptEndsFollowersAndState(t *testing.T) {
	alongside(t)
	e := newEnv(t, sharedAddress(t))
	e.startWorker()
	session := testserver.Session("term-cli")
	prompt := e.starter("prompt", "--session", session, "--retry.baseDelayMs", "60000", "--fault", "503 Service Unavailable", "fix it")
	e.waitFor(session, 60*time.Second, func(ev agent.Event) bool { return ev.Type == agent.EventAutoRetryStart })
	events := e.starter("events", "--session", session, "--follow")
	time.Sleep(1500 * time.Millisecond)
	runID := terminate(t, e, session)
	terminated := time.Now()
	want := fmt.Sprintf("prompt in session %s was terminated (workflow session-%s run %s)\n", session, session, runID)
	for name, p := range map[string]*starterProc{"prompt": prompt, "events": events} {
		code := p.wait(t, 10*time.Second)
		stderr := p.stderr.String()
		t.Logf("starter %s: exit %d %s after the terminate; stderr:\n%s", name, code, time.Since(terminated).Round(100*time.Millisecond), stderr)
		if code != cli.ExitFailed || !strings.HasSuffix(stderr, "starter "+name+": "+want) {
			t.Fatalf("starter %s after a terminate: exit %d, stderr %q; want 1 and %q", name, code, stderr, want)
		}
	}

	st := e.starter("state", "--session", session, "--json")
	if code := st.wait(t, 20*time.Second); code != cli.ExitOK {
		t.Fatalf("state: exit %d", code)
	}
	var state agent.State
	if err := json.Unmarshal([]byte(st.stdout.String()), &state); err != nil {
		t.Fatalf("state --json: %v\n%s", err, st.stdout.String())
	}
	if state.Status != "terminated" || state.IsRetrying || state.PendingRetry != nil || state.IsStreaming {
		t.Fatalf("state of a terminated prompt: %s", st.stdout.String())
	}
	text := e.starter("state", "--session", session)
	if code := text.wait(t, 20*time.Second); code != cli.ExitOK || !strings.Contains(text.stdout.String(), "status terminated") ||
		!strings.Contains(text.stdout.String(), "isRetrying false") || strings.Contains(text.stdout.String(), "pending retry") {
		t.Fatalf("state (text): exit %d\n%s", code, text.stdout.String())
	}

	// A terminated run has no result, so its events are not read after
	// its end (docs/live.md): its last seq is the one its state names.
	lastSeq := state.LastSeq
	if lastSeq == 0 {
		t.Fatalf("state of the terminated prompt names no last seq: %s", st.stdout.String())
	}
	for _, after := range []int64{lastSeq, lastSeq + 10} {
		p := e.starter("events", "--session", session, "--follow", "--after", fmt.Sprint(after))
		code := p.wait(t, 10*time.Second)
		if code != cli.ExitFailed || !strings.HasSuffix(p.stderr.String(), want) || p.stdout.String() != "" {
			t.Fatalf("events --follow --after %d (the end is %d): exit %d, stdout %q, stderr %q", after, lastSeq, code, p.stdout.String(), p.stderr.String())
		}
	}

	// Ctrl-C right after a terminate, before the follower noticed it.
	session2 := testserver.Session("term-cli-2")
	e.s.Retry.BaseDelayMs = 60_000
	e.prompt(session2, "503 Service Unavailable")
	e.waitFor(session2, 60*time.Second, func(ev agent.Event) bool { return ev.Type == agent.EventAutoRetryStart })
	follower := e.starter("events", "--session", session2, "--follow")
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(follower.stdout.String(), "Retrying") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	runID2 := terminate(t, e, session2)
	if err := follower.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code := follower.wait(t, 10*time.Second)
	stderr := follower.stderr.String()
	t.Logf("Ctrl-C after terminate: exit %d, stderr %q", code, stderr)
	if code != cli.ExitFailed || strings.Contains(stderr, "keeps running") ||
		!strings.Contains(stderr, fmt.Sprintf("prompt in session %s was terminated (workflow session-%s run %s)", session2, session2, runID2)) {
		t.Fatalf("Ctrl-C after a terminate: exit %d, stderr %q", code, stderr)
	}
}

// terminate terminates the session's running workflow and returns its run.
func terminate(t *testing.T, e *env, session string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := e.c.DescribeWorkflowExecution(ctx, "session-"+session, "")
	if err != nil {
		t.Fatal(err)
	}
	runID := d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	if err := e.c.TerminateWorkflow(ctx, "session-"+session, runID, "test terminates"); err != nil {
		t.Fatal(err)
	}
	return runID
}
