package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/rpc"
)

// Issue 37 item 8 for RPC (docs/spec.md 14.2.1, 14.2.1a), with a worker
// and the sandbox: without a session, `starter rpc` (and the Go client's
// default command line) starts a new session in its directory, as the
// terminal agent's RPC mode does, and get_state reports it; so a client
// started in project B runs its bash in B although project A has a session
// (at 1dc3898 both served one session "default", which kept A's workspace:
// B/where was never written). `--session` of A's session from B is refused
// in one line before anything is served; -c serves the directory's newest.
func TestRPC_WithoutSessionStaysInItsDirectory(t *testing.T) {
	s := server(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a, b := t.TempDir(), t.TempDir()
	start := func(dir string, extra ...string) *proc {
		t.Helper()
		return startProc(t, dir, append(starterArgs(s, 100, `tool:bash {"command":"pwd > where"}`, "text:ok"), extra...)...)
	}
	// run prompts a client started in dir without a session and returns
	// the session get_state reports.
	run := func(dir string) rpc.SessionState {
		t.Helper()
		c := start(dir)
		c.prompt("where am I")
		if end := c.waitIdle(); end.Status != agent.StatusCompleted {
			t.Fatalf("prompt in %s: end %+v", dir, end)
		}
		st := c.state()
		if got, err := os.ReadFile(filepath.Join(dir, "where")); err != nil || strings.TrimSpace(string(got)) != dir {
			t.Errorf("an rpc client started in %s ran its bash elsewhere (session %s): %s/where %q, %v", dir, st.SessionID, dir, got, err)
		}
		if err := c.close(); err != nil {
			t.Fatalf("close: %v", err)
		}
		return st
	}
	stA, stB := run(a), run(b)
	for dir, st := range map[string]rpc.SessionState{a: stA, b: stB} {
		if !strings.HasPrefix(st.SessionID, filepath.Base(dir)+"-") || filepath.Base(st.SessionFile) != st.SessionID+".jsonl" {
			t.Errorf("get_state in %s: sessionId %q, sessionFile %q; want a new session named after the directory", dir, st.SessionID, st.SessionFile)
		}
	}
	idA := stA.SessionID

	// A's session from B: refused before anything is served.
	cmd := exec.Command(exe, append([]string{"rpc", "--session", idA}, starterArgs(s, 100)...)...)
	cmd.Dir, cmd.Env = b, append(os.Environ(), childEnv+"=1")
	cmd.Stdin = strings.NewReader(`{"type":"bash","command":"pwd > refused"}` + "\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	want := "starter rpc: session " + idA + " works in " + a + ", not " + b + ": "
	if code := cmd.ProcessState.ExitCode(); code != cli.ExitUsage || stdout.Len() != 0 ||
		!strings.HasPrefix(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 {
		t.Errorf("rpc --session %s in B: exit %d\nstdout %q\nstderr %q\nwant exit %d, no output, one line starting %q",
			idA, code, stdout.String(), stderr.String(), cli.ExitUsage, want)
	}
	for _, dir := range []string{a, b} {
		if _, err := os.Stat(filepath.Join(dir, "refused")); err == nil {
			t.Errorf("the refused process ran bash in %s", dir)
		}
	}

	// -c serves A's session again.
	if st := start(a, "-c").state(); st.SessionID != idA {
		t.Errorf("rpc -c in A: get_state %+v; want session %s", st, idA)
	}
}
