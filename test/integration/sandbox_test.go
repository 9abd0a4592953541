package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/settings"
)

// Issue 22's hostile cases, each a scripted model's bash call run by a
// worker on the embedded server, in the sandbox the worker chooses at
// start (tools.sandbox.mode). Every one fails with the sandbox off:
// DURABLE_AGENT_TEST_SANDBOX_MODE=off runs them so.

// envSandboxMode overrides the tools.sandbox.mode of these tests'
// workers (default bubblewrap: the test fails where it does not work).
const envSandboxMode = "DURABLE_AGENT_TEST_SANDBOX_MODE"

// sandboxEnv is an env whose worker runs bash in the sandbox.
func sandboxEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	e.s.Tools.Sandbox.Mode = settings.SandboxBubblewrap
	if m := os.Getenv(envSandboxMode); m != "" {
		e.s.Tools.Sandbox.Mode = m
	}
	return e
}

// hostileBash runs command as the model's bash call in session, with a
// fresh workspace, and returns the call's result text and the run.
func hostileBash(t *testing.T, e *env, session, command string) (string, string, string) {
	t.Helper()
	in := client.PromptInput(e.s, session, "run it")
	in.Workspace = t.TempDir()
	args, _ := json.Marshal(map[string]any{"command": command, "timeout": 60})
	in.Model.Faults = []string{"tool:bash " + string(args), "text:done"}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.result(run)
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	var out string
	for _, ev := range e.events(session) {
		if ev.Type == agent.EventToolExecutionEnd && ev.ToolResult != nil {
			for _, b := range ev.ToolResult.Content {
				out += b.Text
			}
		}
	}
	if !strings.Contains(out, "END-OF-CALL") {
		t.Fatalf("the bash call did not run to its end: %q", out)
	}
	return out, run.GetID(), run.GetRunID()
}

// (a) A provider key in the worker's environment: the command reads the
// worker's /proc/<pid>/environ and prints the key reversed (which
// redaction does not know). Its bytes, raw, reversed, in hex or base64,
// reach no tool result, event, session file or history.
func TestSandbox_WorkerEnvironIsOutOfReach(t *testing.T) {
	const keyName, key = "DA_SANDBOX_IT_API_KEY", "sk-sbx-Hq4Zt8Wm2Rv6Lp0Nc3Jd"
	// In the initial environment of a worker process of its own (a
	// process's /proc/<pid>/environ is the one it was started with).
	t.Setenv(keyName, key)
	e := sandboxEnv(t)
	t.Setenv(envSandboxMode, e.s.Tools.Sandbox.Mode)
	w := e.spawnWorker()
	cmd := fmt.Sprintf(`tr '\0' '\n' < /proc/%d/environ | grep %s | rev; echo END-OF-CALL`,
		w.Process.Pid, keyName)
	out, id, runID := hostileBash(t, e, "sbx-environ", cmd)
	rev := []byte(key)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	needles := []string{key, string(rev), hex.EncodeToString([]byte(key)), base64.StdEncoding.EncodeToString([]byte(key))}
	evs, _ := json.Marshal(e.events("sbx-environ"))
	blobs := map[string][]byte{
		"tool result":   []byte(out),
		"events":        evs,
		"session files": readTree(t, filepath.Join(e.dataDir, "sessions")),
		"history":       history(t, e, id, runID).all,
	}
	for name, blob := range blobs {
		for _, n := range needles {
			if bytes.Contains(blob, []byte(n)) {
				t.Errorf("%s holds the worker's key (as %q)", name, n)
			}
		}
	}
}

// (b) The worker's data dir (its settings file, credential store and
// every session's file) is not visible to a command.
func TestSandbox_DataDirAndOtherSessionsAreInvisible(t *testing.T) {
	e := sandboxEnv(t)
	const settingsMark, otherMark = "settings-mark-Vq7", "other-session-mark-Kx3"
	if err := os.WriteFile(filepath.Join(e.dataDir, "settings.yaml"), []byte("# "+settingsMark+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.startWorker()
	if res, err := e.result(e.prompt("sbx-other", "text:"+otherMark)); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("other session: %+v %v", res, err)
	}
	cmd := fmt.Sprintf(`cat %[1]s/settings.yaml 2>/dev/null; grep -rhao 'other-session-mark-...' %[1]s 2>/dev/null | head -1; ls %[1]s 2>/dev/null | grep -c . ; echo END-OF-CALL`, e.dataDir)
	out, _, _ := hostileBash(t, e, "sbx-reader", cmd)
	if !strings.HasPrefix(out, "0\nEND-OF-CALL") {
		t.Errorf("the command listed entries of the worker's data dir:\n%.800s", out)
	}
	for _, n := range []string{settingsMark, otherMark} {
		if strings.Contains(out, n) {
			t.Errorf("the command saw %q in the worker's data dir:\n%.800s", n, out)
		}
	}
}

// (c) The Temporal frontend on loopback, through which any job could be
// signalled, terminated or read, is unreachable.
func TestSandbox_TemporalFrontendIsUnreachable(t *testing.T) {
	e := sandboxEnv(t)
	e.startWorker()
	host, port, err := net.SplitHostPort(e.s.Temporal.Address)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", e.s.Temporal.Address, 5*time.Second); err != nil {
		t.Fatalf("the frontend is not reachable from the host either, so the test proves nothing: %v", err)
	} else {
		c.Close()
	}
	out, _, _ := hostileBash(t, e, "sbx-frontend", fmt.Sprintf(`(exec 3<>/dev/tcp/%s/%s) && echo FRONTEND-REACHED; echo END-OF-CALL`, host, port))
	if strings.Contains(out, "FRONTEND-REACHED") {
		t.Fatalf("the command connected to the Temporal frontend at %s", e.s.Temporal.Address)
	}
}

// (d) A setsid child, and one that also clears its environment (so no
// mark of the call is left on it), do not outlive the call.
func TestSandbox_DetachedChildrenDoNotOutliveTheCall(t *testing.T) {
	e := sandboxEnv(t)
	e.startWorker()
	n := 1000 + os.Getpid()%50000
	a, b := fmt.Sprintf("sleep %d", n), fmt.Sprintf("sleep %d", n+1)
	t.Cleanup(func() { killAll(t, a); killAll(t, b) })
	out, _, _ := hostileBash(t, e, "sbx-setsid", fmt.Sprintf(`setsid %s >/dev/null 2>&1 & setsid env -i %s >/dev/null 2>&1 & sleep 0.3; echo END-OF-CALL`, a, b))
	time.Sleep(500 * time.Millisecond)
	if left := hostProcesses(t, a, b); len(left) > 0 {
		t.Fatalf("processes outlived the call (%s): %v", out, left)
	}
}

// (e) No network: a listener of the host on a non-loopback address (or
// loopback where there is none) cannot be reached.
func TestSandbox_NoNetwork(t *testing.T) {
	e := sandboxEnv(t)
	e.startWorker()
	ip := "127.0.0.1"
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
				ip = n.IP.String()
				break
			}
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	out, _, _ := hostileBash(t, e, "sbx-net", fmt.Sprintf(`(exec 3<>/dev/tcp/%s/%d) && echo NET-REACHED; echo END-OF-CALL`, ip, port))
	if strings.Contains(out, "NET-REACHED") {
		t.Fatalf("the command connected to %s:%d", ip, port)
	}
}

// hostProcesses lists the pids of the host's processes whose command
// line is one of cmds.
func hostProcesses(t *testing.T, cmds ...string) []int {
	t.Helper()
	out, err := exec.Command("ps", "-eo", "pid=,args=").Output()
	if err != nil {
		t.Fatalf("ps: %v", err)
	}
	var pids []int
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		for _, c := range cmds {
			if strings.Join(f[1:], " ") == c {
				if pid, err := strconv.Atoi(f[0]); err == nil {
					pids = append(pids, pid)
				}
			}
		}
	}
	return pids
}

// killAll kills what a failed run left behind (the test's own sleeps).
func killAll(t *testing.T, cmd string) {
	for _, pid := range hostProcesses(t, cmd) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
