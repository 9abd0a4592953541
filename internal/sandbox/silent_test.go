package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 22's limits, hit silently: a program that a limit ends without a
// word (stderr to /dev/null, a command substitution, a program that exits
// quietly) still gets a result naming the limit, in one line, from what
// the sandbox itself saw: the pids cgroup's count of refused forks, the
// command's CPU time, the signal that ended it. Without evidence nothing
// is named.

// oneLineStatus is the last line of a bash result (its status line),
// failing the test when the status is not one line.
func oneLineStatus(t *testing.T, content string) string {
	t.Helper()
	status := content
	if i := strings.LastIndex(content, "\n\n"); i >= 0 {
		status = content[i+2:]
	}
	if strings.Contains(status, "\n") || status == "" {
		t.Fatalf("status is not one line: %q", content)
	}
	return status
}

func TestSandbox_SilentCPULimitIsNamedAsLikely(t *testing.T) {
	r := runner(t, Config{CPUSeconds: 1})
	ws := t.TempDir()
	for name, script := range map[string]string{
		// bash reports no job a signal ended in a command substitution.
		"SIGXCPU in a substitution": `x=$(bash -c 'while :; do :; done'); exit 4`,
		// Ignoring SIGXCPU: the hard limit's SIGKILL a second later.
		"SIGKILL in a substitution": `x=$(bash -c 'trap "" XCPU; while :; do :; done'); exit 4`,
		"stderr to /dev/null":       `sh -c 'sh -c "while :; do :; done"' 2>/dev/null || exit 4`,
	} {
		t.Run(name, func(t *testing.T) {
			res := bash(t, r, ws, script, 30)
			status := oneLineStatus(t, res.Content)
			want := "Command exited with code 4; it may have hit the sandbox's CPU time limit of 1 s per process (tools.sandbox.cpuSeconds): its processes used "
			if !res.IsError || !strings.HasPrefix(status, want) || res.Details["maybeLimit"] == nil {
				t.Fatalf("want the CPU limit named as likely: %+v", res)
			}
		})
	}
	// A command that failed after using little CPU: no limit is named.
	res := bash(t, r, ws, `x=$(sleep 0.2); exit 4`, 30)
	if status := oneLineStatus(t, res.Content); status != "Command exited with code 4" {
		t.Fatalf("a failure with no sign of a limit: %q", status)
	}
}

func TestSandbox_SilentForkFailureIsNamed(t *testing.T) {
	r := runner(t, Config{MaxProcesses: 4})
	if r.pids == "" {
		t.Skip(r.StartNote())
	}
	// dash says "Cannot fork" to a stderr that is /dev/null and exits.
	script := `sh -c 'sleep 5 & sleep 5 & sleep 5 & sleep 5 & ( : ) || exit 3' 2>/dev/null`
	res := bash(t, r, t.TempDir(), script, 30)
	status := oneLineStatus(t, res.Content)
	if !res.IsError || !strings.HasPrefix(status, "Command was stopped by the sandbox's process limit of 4 (tools.sandbox.maxProcesses): it refused ") ||
		!strings.Contains(status, "new process") || strings.Contains(res.Content, "fork") {
		t.Fatalf("want the process limit named for a silent fork failure: %+v", res)
	}
	// The same fork failure without the limit does not happen.
	if res := bash(t, runner(t, Config{}), t.TempDir(), script+`; echo fine`, 30); res.IsError || res.Content != "fine" {
		t.Fatalf("without the limit: %+v", res)
	}
}

// A C program that does not check malloc's result dies of SIGSEGV when
// the address-space limit refuses the allocation; run in a command
// substitution, nothing says so. The memory limit is named as likely; the
// same program succeeds without the limit.
func TestSandbox_SilentMemoryCrashIsNamedAsLikely(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the program")
	}
	ws := t.TempDir()
	src := filepath.Join(ws, "alloc.c")
	prog := "#include <stdlib.h>\n#include <string.h>\nint main(void) { size_t n = 100u << 20; char *p = malloc(n); memset(p, 1, n); return p[n - 1] - 1; }\n"
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(cc, "-O0", "-o", filepath.Join(ws, "alloc"), src).CombinedOutput(); err != nil {
		t.Skipf("cc: %v: %s", err, out)
	}
	script := `x=$(./alloc); exit $?`
	res := bash(t, withoutMemCgroup(runner(t, Config{MemoryMB: 32})), ws, script, 30)
	status := oneLineStatus(t, res.Content)
	want := "Command exited with code 139; it may have hit the sandbox's memory limit of 32 MiB per process (tools.sandbox.memoryMB): it ended by SIGSEGV"
	if !res.IsError || !strings.HasPrefix(status, want) || res.Content != status {
		t.Fatalf("want the memory limit named as likely: %+v", res)
	}
	if res := bash(t, runner(t, Config{}), ws, script, 30); res.IsError {
		t.Fatalf("without the limit the program fails too, so the test proves nothing: %+v", res)
	}
	// A crash under the limit that is not the limit's cannot be told
	// apart; a failure with no crash is not named.
	if res := bash(t, withoutMemCgroup(runner(t, Config{MemoryMB: 32})), ws, `x=$(exit 3); exit $?`, 30); res.Content != "Command exited with code 3" {
		t.Fatalf("a failure with no sign of a limit: %+v", res)
	}
}

// An allocation refused in a program that then exits quietly leaves the
// kernel no trace: the result says the exit code and names no limit
// rather than guess (docs/security.md, what a silent limit looks like).
func TestSandbox_QuietAllocationFailureIsNotGuessed(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	script := `python3 -c 'b = bytearray(400 * 1024 * 1024)' 2>/dev/null`
	res := bash(t, withoutMemCgroup(runner(t, Config{MemoryMB: 128, CPUSeconds: 60})), t.TempDir(), script, 30)
	if status := oneLineStatus(t, res.Content); status != "Command exited with code 1" {
		t.Fatalf("a quiet failure named a limit without evidence: %+v", res)
	}
}
