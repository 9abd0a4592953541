package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Issue 22: the worker finds where it may make a memory cgroup per
// command: a delegated cgroup v2 memory controller (memory in the
// worker's cgroup.controllers and cgroup.subtree_control), else the
// cgroup v1 memory hierarchy (this machine's), else none, and says why.
func TestMemoryCgroup_FindsV2ElseV1(t *testing.T) {
	for _, tc := range []struct {
		name, cgroup             string
		v2Path, controllers, sub string // the worker's v2 cgroup, "" for no v2 mount
		v1Path                   string // the worker's v1 memory cgroup, "" for no v1 mount
		wantV2, wantV1           bool
		want                     string // why none
	}{
		{name: "pure v2, delegated", cgroup: "0::/user.slice/worker\n", v2Path: "/user.slice/worker", controllers: "cpu memory pids", sub: "memory pids", wantV2: true},
		{name: "v2, memory not in subtree_control", cgroup: "0::/w\n", v2Path: "/w", controllers: "cpu memory", sub: "cpu",
			want: "memory is not in "},
		{name: "hybrid, memory in v1", cgroup: "4:memory:/process_api/x\n1:cpu:/\n0::/\n", v2Path: "/", controllers: "cpu io", v1Path: "/process_api/x", wantV1: true},
		{name: "v1 only", cgroup: "4:memory:/x\n1:cpu:/\n", v1Path: "/x", wantV1: true},
		{name: "v2, no memory controller, no v1", cgroup: "0::/\n", v2Path: "/", controllers: "cpu",
			want: "has no memory controller for"},
		{name: "nothing mounted", cgroup: "0::/\n", want: "no cgroup v2 hierarchy is mounted; no cgroup v1 memory hierarchy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			mi := ""
			var v1Dir, v2Dir string
			if tc.v2Path != "" {
				mount := filepath.Join(root, "unified")
				v2Dir = filepath.Join(mount, tc.v2Path)
				write(t, filepath.Join(v2Dir, "cgroup.controllers"), tc.controllers+"\n")
				write(t, filepath.Join(v2Dir, "cgroup.subtree_control"), tc.sub+"\n")
				mi += "40 30 0:37 / " + mount + " rw,relatime - cgroup2 cgroup2 rw\n"
			}
			if tc.v1Path != "" {
				mount := filepath.Join(root, "memory")
				v1Dir = filepath.Join(mount, tc.v1Path)
				write(t, filepath.Join(v1Dir, "memory.limit_in_bytes"), "9223372036854771712\n")
				mi += "34 30 0:31 / " + mount + " rw,relatime - cgroup cgroup rw,memory\n"
			}
			mi += "38 30 0:35 / " + filepath.Join(root, "pids") + " rw,relatime - cgroup cgroup rw,pids\n"
			write(t, filepath.Join(root, "cgroup"), tc.cgroup)
			write(t, filepath.Join(root, "mountinfo"), mi)
			dir, v2, why := cgroupRoot("memory", "memory.limit_in_bytes", filepath.Join(root, "cgroup"), filepath.Join(root, "mountinfo"))
			switch {
			case tc.wantV2 && (dir != v2Dir || !v2):
				t.Fatalf("dir %q v2 %v (%s), want v2 %q", dir, v2, why, v2Dir)
			case tc.wantV1 && (dir != v1Dir || v2):
				t.Fatalf("dir %q v2 %v (%s), want v1 %q", dir, v2, why, v1Dir)
			case !tc.wantV1 && !tc.wantV2 && (dir != "" || !strings.Contains(why, tc.want)):
				t.Fatalf("dir %q, why %q; want none because %q", dir, why, tc.want)
			}
		})
	}
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// withoutMemCgroup makes r a runner where no memory cgroup can be made:
// memoryMB falls back to RLIMIT_AS (as New decides on such a machine).
func withoutMemCgroup(r *Runner) *Runner {
	r.mem, r.memV2, r.noMem = "", false, "simulated: no memory cgroup"
	r.cfg.memCgroup = false
	return r
}

// memRunner is a runner of c (MemoryMB set) with a memory cgroup per
// command, skipping the test where the worker may make none.
func memRunner(t *testing.T, c Config) *Runner {
	t.Helper()
	r := runner(t, c)
	if r.mem == "" {
		t.Skip(r.MemoryLimitNote())
	}
	return r
}

// leftCgroups lists the memory cgroups this process made under r's that
// are still there.
func leftCgroups(t *testing.T, r *Runner) []string {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(r.mem, fmt.Sprintf("durable-agent-mem-%d-*", os.Getpid())))
	if err != nil {
		t.Fatal(err)
	}
	return left
}

// Issue 22: with memoryMB set the worker's start line says which limit it
// is, in one line: the memory cgroup per command, or the RLIMIT_AS
// fallback and why; without it, nothing.
func TestRunner_MemoryLimitNoteSaysWhichLimit(t *testing.T) {
	r, err := New(Config{MemoryMB: 512, MaxProcesses: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("on this machine: %s", r.StartNote())
	r.mem, r.memV2 = "/sys/fs/cgroup/memory/w", false
	want := "sandbox: tools.sandbox.memoryMB 512 is a memory cgroup (v1) of each command under /sys/fs/cgroup/memory/w: its processes together, swap included; no RLIMIT_AS"
	if got := r.MemoryLimitNote(); got != want {
		t.Fatalf("note %q, want %q", got, want)
	}
	withoutMemCgroup(r)
	note := r.MemoryLimitNote()
	want = "sandbox: tools.sandbox.memoryMB 512 falls back to RLIMIT_AS, the address space of each process, not the command's memory as a whole: no memory cgroup can be made (simulated: no memory cgroup)"
	if note != want {
		t.Fatalf("note %q, want %q", note, want)
	}
	r.pids, r.noPids = "", "no pids cgroup controller"
	if got := r.StartNote(); !strings.Contains(got, note) || !strings.Contains(got, "falls back to RLIMIT_NPROC") || strings.Contains(got, "\n") {
		t.Fatalf("start note %q lacks one of the two notes", got)
	}
	r, _ = New(Config{})
	if got := r.StartNote(); got != "" {
		t.Fatalf("without limits the start note is %q", got)
	}
}

// twiceTheLimit allocates and touches 128 MB in a bash variable (bash
// needs about twice that at its peak); the command's shell holds it.
const twiceTheLimit = `x=$(head -c 128000000 /dev/zero | tr '\0' a); echo ${#x}`

// Issue 22: a command that touches twice tools.sandbox.memoryMB is ended
// by the kernel at its memory cgroup's limit, and the result names the
// limit in one line; the same command without the limit runs, and one
// under the limit runs under it. No cgroup is left after the calls.
func TestSandbox_MemoryCgroupLimitIsNamed(t *testing.T) {
	r := memRunner(t, Config{MemoryMB: 64})
	ws := t.TempDir()
	res := bash(t, r, ws, twiceTheLimit, 60)
	status := oneLineStatus(t, res.Content)
	want := "Command was stopped by the sandbox's memory limit of 64 MiB (tools.sandbox.memoryMB): the kernel's OOM killer ended 1 process of the command at the limit, exit code 137"
	if !res.IsError || status != want {
		t.Fatalf("want the memory limit named:\n%q\ngot %+v", want, res)
	}
	if res := bash(t, r, ws, `x=$(head -c 8000000 /dev/zero | tr '\0' a); echo ${#x}`, 60); res.IsError || res.Content != "8000000" {
		t.Fatalf("8 MB under a limit of 64 MiB: %+v", res)
	}
	if res := bash(t, runner(t, Config{}), ws, twiceTheLimit, 60); res.IsError || res.Content != "128000000" {
		t.Fatalf("without the limit the command fails too, so the test proves nothing: %+v", res)
	}
	if left := leftCgroups(t, r); len(left) != 0 {
		t.Fatalf("memory cgroups left after the calls: %v", left)
	}
}

// forkedAllocation is a Python program that holds 50 MiB and runs a child
// that holds childMiB more: each process alone is well under 96 MiB.
const forkedAllocation = `python3 -c '
import subprocess, sys
b = b"a" * (50 << 20)
subprocess.run([sys.executable, "-c", "b = b\"a\" * (%d << 20); print(\"child\", len(b) >> 20)"], check=True)
print("parent", len(b) >> 20)'`

// Issue 22: the point of a cgroup over RLIMIT_AS: a child's memory counts
// against the same limit as its parent's. A parent holding 50 MiB whose
// child takes 50 MiB more is ended under a limit of 96 MiB; with a child
// of 1 MiB it runs, and under the RLIMIT_AS fallback (each process
// bounded alone) the 50 + 50 runs too.
func TestSandbox_MemoryCgroupCountsForkedChildren(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	r := memRunner(t, Config{MemoryMB: 96})
	ws := t.TempDir()
	res := bash(t, r, ws, strings.Replace(forkedAllocation, "%d", "50", 1), 60)
	if !res.IsError || !strings.Contains(res.Content, "Command was stopped by the sandbox's memory limit of 96 MiB (tools.sandbox.memoryMB): the kernel's OOM killer ended") {
		t.Fatalf("a parent and child of 50 MiB each under 96 MiB: want the limit named: %+v", res)
	}
	if res := bash(t, r, ws, strings.Replace(forkedAllocation, "%d", "1", 1), 60); res.IsError || res.Content != "child 1\nparent 50" {
		t.Fatalf("50 + 1 MiB under a limit of 96 MiB: %+v", res)
	}
	fallback := withoutMemCgroup(runner(t, Config{MemoryMB: 96}))
	if res := bash(t, fallback, ws, strings.Replace(forkedAllocation, "%d", "50", 1), 60); res.IsError || res.Content != "child 50\nparent 50" {
		t.Fatalf("under RLIMIT_AS each process is bounded alone: %+v", res)
	}
}

// Issue 22: each command has a memory cgroup of its own: two commands at once that each hold
// 40 MB (about 80 MB at bash's peak) under a limit of 128 MiB both run,
// where one cgroup shared would end one. While they run there are two
// cgroups; after, none.
func TestSandbox_MemoryCgroupPerCommand(t *testing.T) {
	r := memRunner(t, Config{MemoryMB: 128})
	ws := t.TempDir()
	script := `x=$(head -c 40000000 /dev/zero | tr '\0' a); sleep 1; echo ${#x}`
	var wg sync.WaitGroup
	burst := func() []string {
		out := make([]string, 2)
		for i := range out {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := bash(t, r, ws, script, 60)
				out[i] = res.Content
				if res.IsError {
					out[i] = "error: " + res.Content
				}
			}()
		}
		time.Sleep(500 * time.Millisecond)
		if n := len(leftCgroups(t, r)); n < 2 {
			t.Errorf("%d memory cgroups while two commands run, want one each", n)
		}
		wg.Wait()
		return out
	}
	for i, out := range burst() {
		if out != "40000000" {
			t.Errorf("command %d of two at once: %q", i, out)
		}
	}
	if left := leftCgroups(t, r); len(left) != 0 {
		t.Fatalf("memory cgroups left after the commands: %v", left)
	}
}

// Issue 22: a worker that died before its sandboxes ended (killed, so
// Close never ran) leaves their cgroups; the next runner made removes
// them, and none of a worker still running.
func TestRunner_RemovesTheCgroupsOfADeadWorker(t *testing.T) {
	r := memRunner(t, Config{MemoryMB: 64})
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(r.mem, fmt.Sprintf("durable-agent-mem-%d-7", dead.Process.Pid))
	alive := filepath.Join(r.mem, fmt.Sprintf("durable-agent-mem-%d-7", os.Getppid()))
	for _, d := range []string{left, alive} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	defer os.Remove(alive)
	defer os.Remove(left)
	memRunner(t, Config{MemoryMB: 64})
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("the cgroup of a dead worker is still there: %v", err)
	}
	if _, err := os.Stat(alive); err != nil {
		t.Errorf("the cgroup of a running worker was removed: %v", err)
	}
}
