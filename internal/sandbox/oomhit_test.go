package sandbox

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/durableagent/durableagent/internal/tools"
)

// crashedWorker is a test runner in Python whose worker takes 200 MiB:
// it reports the worker's end and exits 0, as runners that retry or
// skip a crashed worker do.
const crashedWorker = `python3 -c '
import subprocess, sys
r = subprocess.run([sys.executable, "-c", "b = b\"a\" * (200 << 20)"])
print("worker exited", r.returncode)'`

// Issue 22: the OOM killer may end a process of a command whose shell
// goes on and exits 0 (a background job waited for, a test runner whose
// worker crashed): the result is not an error and keeps exit code 0, but
// says in one line that the memory limit ended a process of it. A
// command under the limit gets no such line.
func TestSandbox_MemoryCgroupKillOfAChildIsNoted(t *testing.T) {
	r := memRunner(t, Config{MemoryMB: 64})
	ws := t.TempDir()
	want := "Command exited with code 0, but it hit the sandbox's memory limit of 64 MiB (tools.sandbox.memoryMB): the kernel's OOM killer ended 1 process of the command at the limit"
	scripts := map[string]string{"background job": "(" + twiceTheLimit + ") & wait; echo done"}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		scripts["test runner"] = crashedWorker
	}
	for name, script := range scripts {
		res := bash(t, r, ws, script, 60)
		if res.IsError || res.Details["exitCode"] != 0 || oneLineStatus(t, res.Content) != want || res.Details["limitHit"] == nil {
			t.Errorf("%s: want exit 0, not an error, and the line\n%q\ngot %+v", name, want, res)
		}
	}
	res := bash(t, r, ws, `x=$(head -c 8000000 /dev/zero | tr '\0' a); echo ${#x}`, 60)
	if res.IsError || res.Content != "8000000" || res.Details["limitHit"] != nil {
		t.Errorf("8 MB under a limit of 64 MiB: want the output alone, got %+v", res)
	}
	// The same commands without the limit: nothing is killed, no line.
	free := runner(t, Config{})
	for name, script := range scripts {
		if res := bash(t, free, ws, script, 60); res.IsError || strings.Contains(res.Content, "hit the sandbox's") || strings.Contains(res.Content, "Killed") || strings.Contains(res.Content, "-9") {
			t.Errorf("%s without the limit: %+v", name, res)
		}
	}
}

// fillTmp writes 100 MB to the sandbox's private /tmp, a tmpfs whose
// pages count against the command's memory cgroup but belong to no
// process: the OOM killer ends the processes of the command one by one,
// bwrap among them.
const fillTmp = `head -c 100000000 /dev/zero > /tmp/big; echo wrote $?`

// Issue 22: when the OOM killer ends bwrap itself, the command's exit is
// a signal (SIGKILL), not an exit code; the result still names the
// memory limit and the count, as for any command it ended.
func TestSandbox_MemoryCgroupKillOfBwrapIsNamed(t *testing.T) {
	r := memRunner(t, Config{MemoryMB: 64})
	ws := t.TempDir()
	// Which process the OOM killer ends first varies (bash, bwrap's
	// init, bwrap): bwrap is among them in most runs.
	signaled := 0
	for i := 0; i < 20 && signaled < 2; i++ {
		p, err := r.Start(tools.Command{Script: fillTmp, Dir: ws, Env: benchEnv(ws), Output: &strings.Builder{}})
		if err != nil {
			t.Fatal(err)
		}
		exit, err := p.Wait()
		if err != nil || !strings.HasPrefix(exit.Limit, "memory limit of 64 MiB (tools.sandbox.memoryMB): the kernel's OOM killer ended ") {
			t.Fatalf("run %d: want the memory limit named: %+v, %v", i, exit, err)
		}
		if exit.Signal == syscall.SIGKILL {
			signaled++
		}
		t.Logf("run %d: %+v", i, exit)
	}
	if signaled == 0 {
		t.Fatalf("bwrap was not killed in 20 runs: this test did not see the case it is about")
	}
	res := bash(t, r, ws, fillTmp, 60)
	status := oneLineStatus(t, res.Content)
	if !res.IsError || !strings.HasPrefix(status, "Command was stopped by the sandbox's memory limit of 64 MiB (tools.sandbox.memoryMB): the kernel's OOM killer ended ") ||
		!strings.HasSuffix(status, " of the command at the limit, exit code 137") {
		t.Fatalf("want the memory limit named: %+v", res)
	}
	if res := bash(t, runner(t, Config{}), ws, fillTmp, 60); res.IsError || res.Content != "wrote 0" {
		t.Fatalf("without the limit the command fails too, so the test proves nothing: %+v", res)
	}
}

// forksWithout is a Python program that starts 6 children and does
// without those whose fork is refused, exiting 0.
const forksWithout = `python3 -c '
import os, time
kids = []
for i in range(6):
    try:
        pid = os.fork()
    except BlockingIOError:
        continue
    if pid == 0:
        time.sleep(1)
        os._exit(0)
    kids.append(pid)
for k in kids:
    os.waitpid(k, 0)
print("ran", len(kids))'`

// Issue 22: forks the pids cgroup refused to a command that exits 0 all
// the same (a program that does without the processes it could not
// start) are said in one line; the result is not an error.
func TestSandbox_ProcessLimitHitOnSuccessIsNoted(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	r := runner(t, Config{MaxProcesses: 4})
	if r.pids == "" {
		t.Skip(r.StartNote())
	}
	ws := t.TempDir()
	res := bash(t, r, ws, forksWithout, 60)
	status := oneLineStatus(t, res.Content)
	if res.IsError || res.Details["exitCode"] != 0 || !strings.HasPrefix(res.Content, "ran ") ||
		!strings.HasPrefix(status, "Command exited with code 0, but it hit the sandbox's process limit of 4 (tools.sandbox.maxProcesses): it refused ") {
		t.Fatalf("want exit 0, not an error, and the process limit named: %+v", res)
	}
	if res := bash(t, r, ws, "sleep 0.1 & sleep 0.1 & wait; echo fine", 20); res.IsError || res.Content != "fine" {
		t.Fatalf("two processes under a limit of 4: want the output alone, got %+v", res)
	}
	if res := bash(t, runner(t, Config{}), ws, forksWithout, 60); res.IsError || res.Content != "ran 6" {
		t.Fatalf("without the limit: %+v", res)
	}
}
