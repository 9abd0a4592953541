package sandbox

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/tools"
)

// Issue 22's cost back to back: the calls of one answer (one after
// another, no model turn between them) run in sandboxes started ahead.
// The pool of a workspace is sized from its last burst (at most 8), so
// the next answer's calls find theirs ready and start none while they
// run; a burst longer than the last starts the next spare as it outruns
// the pool; a shorter one shrinks the pool, ending the spares beyond it.
func TestSandbox_BackToBackCallsRunInSandboxesStartedAhead(t *testing.T) {
	r := runner(t, Config{})
	defer r.Close()
	ws := t.TempDir()
	mark := fmt.Sprintf("SANDBOX_POOL_TEST=%d-%d", os.Getpid(), time.Now().UnixNano())
	env := []string{"PATH=/usr/bin:/bin", mark}
	burst := func(n int) (served, started int64) { t.Helper(); return runBurst(t, r, ws, env, n) }
	// A new workspace's pool is one spare: the first call starts its own
	// sandbox, and so does the second, which starts the next as the
	// burst outruns the pool; the third and fourth find one each.
	if served, _ := burst(4); served != 2 {
		t.Fatalf("%d of 4 back-to-back calls of a new workspace ran in a sandbox started ahead, want 2", served)
	}
	// After the burst, the pool is filled to its size.
	waitSpares(t, r, 4)
	if served, started := burst(3); served != 3 || started != 0 {
		t.Fatalf("the next answer's 3 calls: %d ran in a sandbox started ahead (want 3), %d sandboxes were started while they ran (want 0)", served, started)
	}
	waitSpares(t, r, 3)
	// Longer than the pool: the fourth call starts its own and the next
	// spare; the fifth and sixth find one.
	if served, _ := burst(6); served != 5 {
		t.Fatalf("%d of 6 calls after a pool of 3 ran in a sandbox started ahead, want 5", served)
	}
	waitSpares(t, r, 6)
	burst(10)
	waitSpares(t, r, maxPerKey) // at most maxPerKey per workspace and environment
	// One call: the pool shrinks to one; the others' processes are gone.
	burst(1)
	waitSpares(t, r, 1)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		// bwrap, the namespace's init and the waiting shell per spare.
		if left := marked(t, mark); len(left) <= 3 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the pool shrank to one spare but %d processes are left: %v", len(left), left)
		}
	}
}

// Where tools.sandbox.maxProcesses falls back to RLIMIT_NPROC, which
// counts every process of the worker's user (idle spares' too), a
// workspace keeps one spare whatever its bursts.
func TestSandbox_OneSpareUnderTheProcessRlimit(t *testing.T) {
	r := runner(t, Config{MaxProcesses: 64})
	defer r.Close()
	r.pids, r.cfg.pidsCgroup = "", false
	ws := t.TempDir()
	for i := 0; i < 3; i++ {
		if res := bash(t, r, ws, "true", 0); res.IsError {
			t.Fatalf("call %d: %+v", i, res)
		}
	}
	waitSpares(t, r, 1)
	time.Sleep(3 * refillQuiet)
	if n := r.spares.count(); n != 1 {
		t.Fatalf("%d spares under the RLIMIT_NPROC fallback, want 1", n)
	}
}

// A call for a workspace with another environment (or another command
// line: the worker's sandbox settings) ends the spares started for the
// workspace's old one: none outlives the change, and the new call runs in
// a sandbox of its own environment.
func TestSandbox_SparesEndWhenTheWorkspacesEnvironmentChanges(t *testing.T) {
	r := runner(t, Config{})
	defer r.Close()
	ws := t.TempDir()
	old := fmt.Sprintf("SANDBOX_OLD_ENV=%d-%d", os.Getpid(), time.Now().UnixNano())
	run := func(env []string, script string) string {
		t.Helper()
		var out bytes.Buffer
		p, err := r.Start(tools.Command{Script: script, Dir: ws, Env: env, Output: &out})
		if err != nil {
			t.Fatal(err)
		}
		if exit, err := p.Wait(); err != nil || exit.Code != 0 {
			t.Fatalf("%s: %+v %v %s", script, exit, err, out.String())
		}
		return out.String()
	}
	oldEnv := []string{"PATH=/usr/bin:/bin", old}
	run(oldEnv, "true")
	run(oldEnv, "true")
	waitSpares(t, r, 2)
	if left := marked(t, old); len(left) == 0 {
		t.Fatal("the spares of the old environment cannot be seen")
	}
	served := r.spares.served.Load()
	if out := run([]string{"PATH=/usr/bin:/bin", "NEW=1"}, `echo "$NEW ${SANDBOX_OLD_ENV:-unset}"`); out != "1 unset\n" {
		t.Fatalf("the call with the new environment printed %q", out)
	}
	if r.spares.served.Load() != served {
		t.Fatal("a spare of the old environment ran the call")
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if left := marked(t, old); len(left) == 0 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("spares of the old environment outlived the change: %v", left)
		}
	}
}

// With network allowlist a sandbox started ahead has an egress proxy of
// its own: the next call reaches the allowed host through it.
func TestSandbox_NetworkAllowlistStartsAheadToo(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from "+r.Host)
	}))
	defer srv.Close()
	var log syncBuffer
	r := runner(t, egressConfig(t, []string{"allowed.test"},
		map[string]string{"allowed.test": "203.0.113.7"},
		map[string]string{"203.0.113.7:80": srv.Listener.Addr().String()}, &log))
	defer r.Close()
	ws := t.TempDir()
	for i := 0; i < 2; i++ {
		res := bash(t, r, ws, `curl -sS --max-time 10 http://allowed.test/`, 30)
		if res.IsError || res.Content != "hello from allowed.test" {
			t.Fatalf("call %d: %+v", i, res)
		}
		if i == 0 {
			waitSpare(t, r) // the model's turn
		}
	}
	if n := r.spares.served.Load(); n != 1 {
		t.Fatalf("%d allowlist calls ran in a sandbox started ahead, want 1", n)
	}
}

// Runner.Close (the worker stopping) ends every sandbox started ahead,
// one still being started included: no bwrap process of the runner is
// left, nor its call or proxy directories; later calls still run, in
// sandboxes of their own, and leave nothing behind.
func TestRunner_CloseLeavesNoSandboxRunning(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where call and proxy directories go
	r := runner(t, Config{})
	ws := t.TempDir()
	mark := fmt.Sprintf("SANDBOX_CLOSE_TEST=%d-%d", os.Getpid(), time.Now().UnixNano())
	env := []string{"PATH=/usr/bin:/bin", mark}
	run := func(script string) tools.Result {
		var out bytes.Buffer
		p, err := r.Start(tools.Command{Script: script, Dir: ws, Env: env, Output: &out})
		if err != nil {
			t.Fatal(err)
		}
		exit, err := p.Wait()
		if err != nil || exit.Code != 0 {
			t.Fatalf("%s: %+v %v %s", script, exit, err, out.String())
		}
		return tools.Result{Content: out.String()}
	}
	run("true")
	waitSpare(t, r)
	// A spare taken, then a call that outruns the pool, whose successor
	// is being started as Close runs.
	run("true")
	p, err := r.Start(tools.Command{Script: "true", Dir: ws, Env: env, Output: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	if left := marked(t, mark); len(left) != 0 {
		t.Fatalf("processes of the runner outlived Close: %v", left)
	}
	served := r.spares.served.Load()
	if out := run("echo after"); out.Content != "after\n" {
		t.Fatalf("a call after Close: %q", out.Content)
	}
	if left := marked(t, mark); len(left) != 0 || r.spares.served.Load() != served || r.spares.count() != 0 {
		t.Fatalf("a call after Close left processes %v or used a spare", left)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("directories outlived Close: %v", left)
	}
}

// marked lists the host's processes whose environment holds mark
// (bwrap passes the call's environment to the sandbox's processes).
func marked(t *testing.T, mark string) []string {
	t.Helper()
	dirs, err := filepath.Glob("/proc/[0-9]*/environ")
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, v := range bytes.Split(b, []byte{0}) {
			if string(v) == mark {
				comm, _ := os.ReadFile(filepath.Join(filepath.Dir(f), "comm"))
				left = append(left, filepath.Base(filepath.Dir(f))+" "+strings.TrimSpace(string(comm)))
			}
		}
	}
	return left
}

// A sandbox started ahead binds the workspace directory of its start; if
// another directory has taken the path since (a fresh clone, a restore),
// the next call runs in a new sandbox of that one, not in the old.
func TestSandbox_StartedAheadIsNotUsedForAReplacedWorkspace(t *testing.T) {
	r := runner(t, Config{})
	defer r.Close()
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	bash(t, r, ws, "true", 0)
	waitSpare(t, r)
	if err := os.Rename(ws, ws+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if res := bash(t, r, ws, "echo here > made", 0); res.IsError {
		t.Fatalf("%+v", res)
	}
	if _, err := os.Stat(filepath.Join(ws, "made")); err != nil {
		t.Fatalf("the call did not run in the workspace now at the path: %v", err)
	}
	if n := r.spares.served.Load(); n != 0 {
		t.Fatalf("the sandbox started ahead for the old directory ran the call")
	}
}

// A sandbox killed while bwrap sets it up (a spare ended as it starts:
// Runner.Close, a pool shrinking) is gone at once: bwrap can leave its
// init behind before --die-with-parent applies, and Kill ends that init
// too instead of waiting out initGrace.
func TestSandbox_KilledWhileStartingEndsAtOnce(t *testing.T) {
	r := runner(t, Config{})
	defer r.Close()
	ws := t.TempDir()
	for i := 0; i < 30; i++ {
		a, err := newAheadCall()
		if err != nil {
			t.Fatal(err)
		}
		p, err := r.launch(ws, []string{"PATH=/usr/bin:/bin"}, "", a)
		if err != nil {
			a.remove()
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i%15) * time.Millisecond)
		start := time.Now()
		p.discard()
		if d := time.Since(start); d > initGrace/2 {
			t.Fatalf("kill %d, %d ms after the start: the sandbox took %v to end", i, i%15, d)
		}
	}
}

// runBurst runs n commands one after another in workspace ws with env,
// as the calls of one answer, each checked to print its own line, and
// says how many ran in a spare (served) and how many sandboxes the pool
// started while they ran.
func runBurst(t *testing.T, r *Runner, ws string, env []string, n int) (served, started int64) {
	t.Helper()
	served, started = r.spares.served.Load(), r.spares.started.Load()
	for i := 0; i < n; i++ {
		var out bytes.Buffer
		p, err := r.Start(tools.Command{Script: "echo call " + strconv.Itoa(i), Dir: ws, Env: env, Output: &out})
		if err != nil {
			t.Fatal(err)
		}
		if exit, err := p.Wait(); err != nil || exit.Code != 0 || out.String() != "call "+strconv.Itoa(i)+"\n" {
			t.Fatalf("call %d: %+v %v %q", i, exit, err, out.String())
		}
	}
	return r.spares.served.Load() - served, r.spares.started.Load() - started
}
