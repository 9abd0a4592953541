package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/tools"
)

// runner is a sandbox of c, skipping the test where bubblewrap cannot run.
func runner(t *testing.T, c Config) *Runner {
	t.Helper()
	r, err := New(c)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := r.Probe(); err != nil {
		t.Skipf("bubblewrap unusable here: %v", err)
	}
	return r
}

// bash runs command with the bash tool in workspace ws through r.
func bash(t testing.TB, r tools.Runner, ws, command string, timeoutSec float64) tools.Result {
	t.Helper()
	args := map[string]any{"command": command}
	if timeoutSec > 0 {
		args["timeout"] = timeoutSec
	}
	raw, _ := json.Marshal(args)
	return tools.Run(context.Background(), tools.Bash, raw, tools.Options{
		Workspace: ws, Runner: r, OutputDir: "out", Env: benchEnv(ws),
	})
}

// benchEnv is the environment bash gets in workspace ws (bash).
func benchEnv(ws string) []string {
	return []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + ws}
}

func TestSandbox_SeesTheWorkspaceAndTheSystemOnly(t *testing.T) {
	r := runner(t, Config{})
	ws := t.TempDir()
	secretDir := t.TempDir() // a sibling of the workspace, e.g. a data dir
	if err := os.WriteFile(filepath.Join(secretDir, "settings.yaml"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	res := bash(t, r, ws, "echo hi > made.txt && cat made.txt && pwd", 0)
	if res.IsError || !strings.Contains(res.Content, "hi\n"+ws) {
		t.Fatalf("workspace not writable or not the working directory: %+v", res)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "made.txt")); err != nil || string(b) != "hi\n" {
		t.Fatalf("the file written in the sandbox is not in the workspace: %q %v", b, err)
	}
	home, _ := os.UserHomeDir()
	for _, p := range []string{filepath.Join(secretDir, "settings.yaml"), home, "/etc/shadow", "/root", "/var"} {
		res = bash(t, r, ws, "ls -d "+p, 0)
		if !res.IsError {
			t.Errorf("%s is visible in the sandbox: %s", p, res.Content)
		}
	}
	res = bash(t, r, ws, "touch /usr/x", 0)
	if !res.IsError || !strings.Contains(res.Content, "Read-only file system") {
		t.Errorf("/usr is writable in the sandbox: %+v", res)
	}
	// Its own /proc: pid 1 is the sandbox's, the worker (this test) is not there.
	res = bash(t, r, ws, fmt.Sprintf("ls /proc/%d", os.Getpid()), 0)
	if !res.IsError {
		t.Errorf("the worker's /proc entry is visible in the sandbox: %s", res.Content)
	}
}

func TestSandbox_HidesTheDataDirInsideTheWorkspace(t *testing.T) {
	ws := t.TempDir()
	data := filepath.Join(ws, ".durable-agent")
	if err := os.MkdirAll(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "credentials.json"), []byte("sk-hidden"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runner(t, Config{Hide: []string{data}})
	res := bash(t, r, ws, "ls -A .durable-agent; cat .durable-agent/credentials.json 2>/dev/null; echo END", 0)
	if res.Content != "END" {
		t.Fatalf("the data dir inside the workspace is visible: %s", res.Content)
	}
}

func TestSandbox_BackgroundAndSetsidChildrenEndWithTheCall(t *testing.T) {
	r := runner(t, Config{})
	ws := t.TempDir()
	marker := fmt.Sprintf("sleep %d", 900000+os.Getpid()%1000)
	res := bash(t, r, ws, "setsid "+marker+" >/dev/null 2>&1 & nohup "+marker+" >/dev/null 2>&1 & echo started", 0)
	if res.IsError || !strings.Contains(res.Content, "started") {
		t.Fatalf("command failed: %+v", res)
	}
	if left := processesRunning(t, marker); left != "" {
		t.Fatalf("processes outlived the call:\n%s", left)
	}
}

func TestSandbox_KillEndsEveryProcess(t *testing.T) {
	r := runner(t, Config{})
	ws := t.TempDir()
	marker := fmt.Sprintf("sleep %d", 800000+os.Getpid()%1000)
	start := time.Now()
	res := bash(t, r, ws, "setsid "+marker+" & "+marker, 1)
	if !res.IsError || !strings.Contains(res.Content, "timed out") {
		t.Fatalf("want a timeout: %+v", res)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the timed-out call took %v", d)
	}
	if left := processesRunning(t, marker); left != "" {
		t.Fatalf("processes outlived the killed call:\n%s", left)
	}
}

// processesRunning lists the host's processes whose command line is cmd.
func processesRunning(t *testing.T, cmd string) string {
	t.Helper()
	out, err := exec.Command("ps", "-eo", "pid,args").Output()
	if err != nil {
		t.Fatalf("ps: %v", err)
	}
	var left []string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && strings.Join(f[1:], " ") == cmd {
			left = append(left, l)
		}
	}
	return strings.Join(left, "\n")
}

func TestSandbox_NetworkOffReachesNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
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
	probe := fmt.Sprintf("(exec 3<>/dev/tcp/127.0.0.1/%d) && echo CONNECTED", port)
	ws := t.TempDir()
	if res := bash(t, runner(t, Config{}), ws, probe, 10); strings.Contains(res.Content, "CONNECTED") {
		t.Fatalf("network off reached the host's loopback: %s", res.Content)
	}
	if res := bash(t, runner(t, Config{Network: NetworkHost}), ws, probe, 10); !strings.Contains(res.Content, "CONNECTED") {
		t.Fatalf("network host did not reach the host's loopback: %+v", res)
	}
}

func TestSandbox_CPULimitIsNamed(t *testing.T) {
	r := runner(t, Config{CPUSeconds: 1})
	res := bash(t, r, t.TempDir(), "while :; do :; done", 20)
	if !res.IsError || !strings.Contains(res.Content, "CPU time limit of 1 s") {
		t.Fatalf("want the CPU limit named: %+v", res)
	}
}

func TestSandbox_MemoryLimitStopsAnAllocation(t *testing.T) {
	ws := t.TempDir()
	// 200 MiB of memory touched by a program that may only map 64 MiB.
	script := "head -c 200000000 /dev/zero | sort >/dev/null && echo ALLOCATED"
	if res := bash(t, withoutMemCgroup(runner(t, Config{MemoryMB: 64})), ws, script, 30); !res.IsError || strings.Contains(res.Content, "ALLOCATED") {
		t.Fatalf("a 64 MB sandbox allocated 200 MB: %+v", res)
	}
	if res := bash(t, runner(t, Config{}), ws, script, 30); res.IsError {
		t.Fatalf("without a limit the allocation fails too, so the test proves nothing: %+v", res)
	}
}

func TestSandbox_CapabilitiesAreDropped(t *testing.T) {
	res := bash(t, runner(t, Config{}), t.TempDir(), "grep CapEff /proc/self/status", 0)
	if !strings.Contains(res.Content, "0000000000000000") {
		t.Fatalf("the command has capabilities: %s", res.Content)
	}
}

func TestConfig_BadValuesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{Network: "lan"}, `sandbox network "lan" is not one of off, host, allowlist`},
		{Config{Network: NetworkAllowlist}, "sandbox network allowlist has no allowed hosts; list some or use network off"},
		{Config{MemoryMB: -1}, "sandbox memoryMB -1 is negative"},
		{Config{Hide: []string{"data"}}, `sandbox hidden directory "data" is not an absolute path`},
	} {
		_, err := New(tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("New(%+v) = %v, want one line with %q", tc.c, err, tc.want)
		}
	}
	if _, err := (Config{}).args("/", "true", "", ""); err == nil {
		t.Errorf("the root directory was accepted as a workspace")
	}
	if _, err := New(Config{Binary: "/nonexistent/bwrap"}); err != nil {
		t.Fatal(err)
	} else if r, _ := New(Config{Binary: "/nonexistent/bwrap"}); r.Probe() == nil {
		t.Errorf("a missing bwrap passed the probe")
	}
}

// The file tools run in the worker and check a path's real location
// before they open it; a link swapped between the check and the open
// would escape. In the sandbox nothing of a bash call runs after it (tool
// calls that change something run alone), so a swapper the model leaves
// behind is gone before the next file tool looks: reads of the link never
// return the file outside the workspace.
func TestSandbox_NoSwapperOutlivesItsCallToRaceTheFileTools(t *testing.T) {
	r := runner(t, Config{})
	ws, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("outside-secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "inside.txt"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	swap := fmt.Sprintf(`while :; do ln -sfn %s link; ln -sfn inside.txt link; done`, secret)
	res := bash(t, r, ws, fmt.Sprintf(`(%s) >/dev/null 2>&1 & setsid env -i sh -c '%s' >/dev/null 2>&1 & sleep 0.2; echo started`, swap, swap), 0)
	if !strings.Contains(res.Content, "started") {
		t.Fatalf("swapper: %+v", res)
	}
	opts := tools.Options{Workspace: ws, Confine: true, Runner: r, OutputDir: "out"}
	for i := 0; i < 300; i++ {
		res := tools.Run(context.Background(), tools.Read, json.RawMessage(`{"path":"link"}`), opts)
		if strings.Contains(res.Content, "outside-secret") {
			t.Fatalf("read %d returned the file outside the workspace", i)
		}
	}
	if fi, err := os.Lstat(filepath.Join(ws, "link")); err == nil {
		t1 := fi.ModTime()
		time.Sleep(100 * time.Millisecond)
		if fi2, err := os.Lstat(filepath.Join(ws, "link")); err == nil && !fi2.ModTime().Equal(t1) {
			t.Fatalf("the link is still being swapped after the call")
		}
	}
}

// Issue 22: a command that starts more processes than
// tools.sandbox.maxProcesses gets a result naming the limit, even when
// the worker runs as root (the limit is a pids cgroup, not RLIMIT_NPROC).
func TestSandbox_ProcessLimitIsNamed(t *testing.T) {
	r := runner(t, Config{MaxProcesses: 4})
	if r.pids == "" {
		t.Skip(r.StartNote())
	}
	ws := t.TempDir()
	res := bash(t, r, ws, "for i in 1 2 3 4 5 6 7 8; do sleep 3 & done; wait; exit 3", 60)
	if !res.IsError || !strings.Contains(res.Content, "process limit of 4 (tools.sandbox.maxProcesses)") {
		t.Fatalf("want the process limit named: %+v", res)
	}
	if res := bash(t, r, ws, "sleep 0.1 & sleep 0.1 & wait; echo fine", 20); res.IsError || !strings.Contains(res.Content, "fine") {
		t.Fatalf("two processes under a limit of 4: %+v", res)
	}
}

// Issue 22: an allocation that tools.sandbox.memoryMB refuses gives a
// result naming the limit, where the program says the allocation failed.
func TestSandbox_MemoryLimitIsNamed(t *testing.T) {
	script := `x=$(head -c 100000000 /dev/zero | tr '\0' a); echo ${#x}`
	res := bash(t, withoutMemCgroup(runner(t, Config{MemoryMB: 64})), t.TempDir(), script, 30)
	if !res.IsError || !strings.Contains(res.Content, "memory limit of 64 MiB per process (tools.sandbox.memoryMB)") {
		t.Fatalf("want the memory limit named: %+v", res)
	}
	if res := bash(t, runner(t, Config{}), t.TempDir(), script, 30); res.IsError {
		t.Fatalf("without a limit the allocation fails too, so the test proves nothing: %+v", res)
	}
}

// Issue 22: where no pids cgroup can be made, the worker's start line
// says maxProcesses falls back to RLIMIT_NPROC and why; with the cgroup,
// or without the limit, it says nothing.
func TestRunner_ProcessLimitNoteSaysTheFallback(t *testing.T) {
	r := runner(t, Config{MaxProcesses: 3})
	r.pids, r.noPids = "", "no pids cgroup controller"
	want := "sandbox: tools.sandbox.maxProcesses 3 falls back to RLIMIT_NPROC (no pids cgroup controller)"
	if got := r.StartNote(); !strings.HasPrefix(got, want) || strings.Contains(got, "\n") {
		t.Fatalf("note %q, want one line starting %q", got, want)
	}
	r.pids = "/sys/fs/cgroup/pids"
	if got := r.StartNote(); got != "" {
		t.Fatalf("with a cgroup the note is %q", got)
	}
	if got := runner(t, Config{}).StartNote(); got != "" {
		t.Fatalf("without maxProcesses the note is %q", got)
	}
}

// Issue 22: a process that ignores SIGXCPU is killed (SIGKILL) at the
// CPU limit's hard limit; the result still names the limit, and a
// SIGKILL from anyone else does not.
func TestSandbox_CPULimitKillIsNamed(t *testing.T) {
	r := runner(t, Config{CPUSeconds: 1})
	ws := t.TempDir()
	res := bash(t, r, ws, "trap '' XCPU; while :; do :; done", 30)
	if !res.IsError || !strings.Contains(res.Content, "CPU time limit of 1 s (tools.sandbox.cpuSeconds): killed (SIGKILL) after") {
		t.Fatalf("want the CPU limit named for its SIGKILL: %+v", res)
	}
	res = bash(t, r, ws, "kill -KILL $$", 30)
	if !res.IsError || strings.Contains(res.Content, "CPU time limit") || !strings.Contains(res.Content, "exited with code 137") {
		t.Fatalf("a SIGKILL that is not the CPU limit's was named as it: %+v", res)
	}
}

// Issue 22: a program that the CPU limit stops inside a longer command
// (the command's shell goes on and fails) gets the limit named too.
func TestSandbox_CPULimitOfAChildIsNamed(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	r := runner(t, Config{CPUSeconds: 1})
	res := bash(t, r, t.TempDir(), "python3 -c 'while True: pass'; echo after; exit 4", 30)
	if !res.IsError || !strings.Contains(res.Content, "after") ||
		!strings.Contains(res.Content, "CPU time limit of 1 s (tools.sandbox.cpuSeconds): a process it ended made the command fail, exit code 4") {
		t.Fatalf("want the CPU limit named: %+v", res)
	}
}

// Issue 22: Python's MemoryError under tools.sandbox.memoryMB names the
// limit; the same allocation without the limit succeeds.
func TestSandbox_MemoryLimitOfPythonIsNamed(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	script := "python3 -c 'b = bytearray(400 * 1024 * 1024); print(len(b))'"
	res := bash(t, withoutMemCgroup(runner(t, Config{MemoryMB: 128})), t.TempDir(), script, 30)
	if !res.IsError || !strings.Contains(res.Content, "MemoryError") ||
		!strings.Contains(res.Content, "memory limit of 128 MiB per process (tools.sandbox.memoryMB): an allocation failed, exit code 1") {
		t.Fatalf("want the memory limit named: %+v", res)
	}
	if res := bash(t, runner(t, Config{}), t.TempDir(), script, 30); res.IsError || !strings.Contains(res.Content, "419430400") {
		t.Fatalf("without a limit the allocation fails too, so the test proves nothing: %+v", res)
	}
}

// Issue 22: where maxProcesses is RLIMIT_NPROC (no pids cgroup), a
// refused fork names the limit. RLIMIT_NPROC does not bind root, so the
// sandbox runs as nobody (setpriv before bwrap, which then needs
// unprivileged user namespaces).
func TestSandbox_ProcessRlimitIsNamed(t *testing.T) {
	setpriv, err := exec.LookPath("setpriv")
	if err != nil || os.Getuid() != 0 {
		t.Skip("needs root and setpriv to run the sandbox as nobody")
	}
	bwrap, err := (Config{}).binary()
	if err != nil {
		t.Skip(err)
	}
	// Not t.TempDir, whose parent nobody may not enter.
	dir, err := os.MkdirTemp("", "sandbox-nproc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	wrapper := filepath.Join(dir, "bwrap-as-nobody")
	script := fmt.Sprintf("#!/bin/sh\nexec %s --reuid 65534 --regid 65534 --clear-groups %s \"$@\"\n", setpriv, bwrap)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dir, ws} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	r, err := New(Config{Binary: wrapper, MaxProcesses: 4})
	if err != nil {
		t.Fatal(err)
	}
	// The fallback, as where the worker may not make cgroups.
	r.pids, r.cfg.pidsCgroup = "", false
	if res := bash(t, r, ws, "id -u", 10); res.IsError || strings.TrimSpace(res.Content) != "65534" {
		t.Skipf("the sandbox does not run as nobody here: %+v", res)
	}
	res := bash(t, r, ws, "for i in 1 2 3 4 5 6; do sleep 1 & done; wait; exit 3", 60)
	if !res.IsError || !strings.Contains(res.Content, "process limit of 4 (tools.sandbox.maxProcesses, RLIMIT_NPROC of the worker's user): a new process was refused, exit code ") {
		t.Fatalf("want the process limit named: %+v", res)
	}
	if res := bash(t, r, ws, "sleep 0.1 & wait; exit 3", 20); strings.Contains(res.Content, "process limit") {
		t.Fatalf("a command that stayed under the limit was said to hit it: %+v", res)
	}
}
