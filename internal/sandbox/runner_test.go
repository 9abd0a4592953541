package sandbox

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/tools"
)

// A sandbox that cannot start leaves nothing behind: no open pipe, no
// limit shell's status pipe, no pids cgroup, no egress bridge. A worker
// whose bubblewrap went missing, or whose cgroup tree went away, keeps
// answering every call with the error, and must not run out of
// descriptors or fill the cgroup tree doing so.
func TestStart_AFailedStartLeavesNothingBehind(t *testing.T) {
	limited := func(t *testing.T) *Runner {
		c := egressConfig(t, []string{"example.com"}, nil, nil, io.Discard)
		c.MaxProcesses, c.MemoryMB, c.CPUSeconds = 64, 512, 60
		return runner(t, c)
	}
	for _, tc := range []struct {
		name, want string
		break_     func(t *testing.T, r *Runner)
	}{
		// The last step fails: exec of bubblewrap (started directly,
		// without a cgroup-joining shell).
		{"bubblewrap gone", "start bubblewrap", func(t *testing.T, r *Runner) {
			r.bin = filepath.Join(t.TempDir(), "bwrap-gone")
			r.pids, r.mem = "", ""
		}},
		// A step in the middle fails, after the egress bridge, the pipes,
		// the status pipe and the pids cgroup (where there is one) were made.
		{"memory cgroup gone", "sandbox memory cgroup", func(t *testing.T, r *Runner) {
			r.mem, r.memV2 = filepath.Join(t.TempDir(), "cgroup-gone"), false
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := limited(t)
			pidsRoot := r.pids
			tc.break_(t, r)
			ws := t.TempDir()
			fdsBefore, cgBefore := openFDs(t), cgroupsUnder(pidsRoot)
			for range 20 {
				_, err := r.Start(tools.Command{Dir: ws, Env: []string{"PATH=/usr/bin:/bin"}, Script: "true", Output: io.Discard})
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("start: %v, want an error naming %q", err, tc.want)
				}
			}
			// A leak is two or more descriptors a launch (a pipe); fewer
			// than one a launch is a background goroutine of an earlier
			// test, not this.
			if got := openFDs(t); got-fdsBefore >= 20 {
				t.Errorf("20 failed starts left %d descriptors open (%d before, %d after)", got-fdsBefore, fdsBefore, got)
			}
			if got := cgroupsUnder(pidsRoot); got != cgBefore {
				t.Errorf("20 failed starts left %d pids cgroups under %s", got-cgBefore, pidsRoot)
			}
			t.Logf("pids cgroup root here: %q", pidsRoot)
		})
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(entries)
}

// cgroupsUnder counts this process's pids cgroups under root (newPidsGroup's
// names): other test binaries make theirs under the same root meanwhile.
func cgroupsUnder(root string) int {
	if root == "" {
		return 0
	}
	entries, _ := filepath.Glob(filepath.Join(root, fmt.Sprintf("durable-agent-%d-*", os.Getpid())))
	return len(entries)
}

// A sandbox killed while bwrap sets it up (a call cancelled as it
// starts) is gone at once: bwrap can leave its init behind before
// --die-with-parent applies, and Kill ends that init too instead of
// waiting out initGrace.
func TestSandbox_KilledWhileStartingEndsAtOnce(t *testing.T) {
	r := runner(t, Config{})
	ws := t.TempDir()
	for i := 0; i < 30; i++ {
		p, err := r.Start(tools.Command{Dir: ws, Env: []string{"PATH=/usr/bin:/bin"}, Script: "sleep 60", Output: io.Discard})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i%15) * time.Millisecond)
		start := time.Now()
		p.Kill()
		_, _ = p.Wait()
		if d := time.Since(start); d > initGrace/2 {
			t.Fatalf("kill %d, %d ms after the start: the sandbox took %v to end", i, i%15, d)
		}
	}
}

// A sandboxed command reads the stdin it is given and writes its stderr
// apart from its stdout when asked (a stdio MCP server speaks on stdout
// and logs on stderr), with and without the limit shell in between.
func TestSandbox_StdinInAndStderrApart(t *testing.T) {
	for name, cfg := range map[string]Config{"plain": {}, "limited": {CPUSeconds: 60}} {
		t.Run(name, func(t *testing.T) {
			r := runner(t, cfg)
			in, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			var out, errOut strings.Builder
			p, err := r.Start(tools.Command{Dir: t.TempDir(), Env: []string{"PATH=/usr/bin:/bin"},
				Script: "read line; echo \"got $line\"; echo oops >&2", Stdin: in, Output: &out, Stderr: &errOut})
			in.Close()
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintln(w, "hello")
			w.Close()
			if exit, err := p.Wait(); err != nil || exit.Code != 0 {
				t.Fatalf("exit %+v, %v", exit, err)
			}
			if out.String() != "got hello\n" || errOut.String() != "oops\n" {
				t.Fatalf("stdout %q, stderr %q; want \"got hello\\n\" and \"oops\\n\"", out.String(), errOut.String())
			}
		})
	}
}
