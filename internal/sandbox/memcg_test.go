package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 22: the worker tells a delegated cgroup v2 memory controller
// from a hybrid whose memory controller is cgroup v1's (this machine's)
// and from no cgroup v2 at all.
func TestMemoryCgroup_FindsADelegatedV2MemoryController(t *testing.T) {
	for _, tc := range []struct {
		name, cgroup, path, controllers string
		mounted                         bool
		want                            string // "" : found
	}{
		{"pure v2, delegated", "0::/user.slice/worker\n", "/user.slice/worker", "cpu io memory pids", true, ""},
		{"hybrid, memory in v1", "4:memory:/x\n1:cpu:/\n0::/\n", "/", "cpu io", true, "has no memory controller"},
		{"v1 only", "4:memory:/x\n1:cpu:/\n", "/", "", false, "the worker is in no cgroup v2 hierarchy"},
		{"v2 line, nothing mounted", "0::/\n", "/", "", false, "no cgroup v2 hierarchy is mounted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			mount := filepath.Join(root, "unified")
			cg := filepath.Join(mount, tc.path)
			if err := os.MkdirAll(cg, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(cg, "cgroup.controllers"), []byte(tc.controllers+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			mi := "30 1 0:26 / /sys/fs/cgroup/memory rw,relatime shared:5 - cgroup cgroup rw,memory\n"
			if tc.mounted {
				mi += "40 30 0:37 / " + mount + " rw,relatime - cgroup2 cgroup2 rw\n"
			}
			files := map[string]string{"cgroup": tc.cgroup, "mountinfo": mi}
			for name, body := range files {
				if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			dir, why := memoryCgroup(filepath.Join(root, "cgroup"), filepath.Join(root, "mountinfo"))
			switch {
			case tc.want == "" && dir != cg:
				t.Fatalf("dir %q (%s), want %q", dir, why, cg)
			case tc.want != "" && (dir != "" || !strings.Contains(why, tc.want)):
				t.Fatalf("dir %q, why %q; want none because %q", dir, why, tc.want)
			}
		})
	}
}

// Issue 22: with memoryMB set the worker's start line says the limit is
// RLIMIT_AS and why no cgroup limit, in one line; without it, nothing.
func TestRunner_MemoryLimitNoteSaysRlimit(t *testing.T) {
	r, err := New(Config{MemoryMB: 512, MaxProcesses: 3})
	if err != nil {
		t.Fatal(err)
	}
	note := r.MemoryLimitNote()
	want := "sandbox: tools.sandbox.memoryMB 512 is RLIMIT_AS, the address space of each process"
	if !strings.HasPrefix(note, want) || strings.Contains(note, "\n") {
		t.Fatalf("note %q, want one line starting %q", note, want)
	}
	t.Logf("on this machine: %s", note)
	r.pids, r.noPids = "", "no pids cgroup controller"
	if got := r.StartNote(); !strings.Contains(got, note) || !strings.Contains(got, "falls back to RLIMIT_NPROC") || strings.Contains(got, "\n") {
		t.Fatalf("start note %q lacks one of the two notes", got)
	}
	r, _ = New(Config{})
	if got := r.StartNote(); got != "" {
		t.Fatalf("without limits the start note is %q", got)
	}
}
