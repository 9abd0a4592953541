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

// Issue 22's cold start: calls one after another with no model turn
// between them (several tool calls of one answer) run in a sandbox
// started ahead too: the next one is started as soon as a call takes
// one, and a call waits for one still being started rather than start
// its own.
func TestSandbox_BackToBackCallsRunInSandboxesStartedAhead(t *testing.T) {
	r := runner(t, Config{})
	defer r.Close()
	ws := t.TempDir()
	for i := 0; i < 4; i++ {
		if res := bash(t, r, ws, "echo call "+strconv.Itoa(i), 0); res.IsError || res.Content != "call "+strconv.Itoa(i) {
			t.Fatalf("call %d: %+v", i, res)
		}
	}
	// The first call starts its own sandbox; the other three find one.
	if n := r.spares.served.Load(); n != 3 {
		t.Fatalf("%d of 3 back-to-back calls ran in a sandbox started ahead", n)
	}
	r.spares.mu.Lock()
	n := len(r.spares.m)
	r.spares.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d sandboxes wait ahead for one workspace and environment, want 1", n)
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
	// A spare taken and its successor being started as Close runs.
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
	if left := marked(t, mark); len(left) != 0 || r.spares.served.Load() != served || len(r.spares.m) != 0 {
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
