package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
)

// Issue 22: a bash call that a tools.sandbox limit ends gives the model
// a result naming the limit and its value: the CPU limit's SIGKILL (a
// loop that ignores SIGXCPU), 400 MiB touched under 128 (the memory
// cgroup's OOM kill, or Python's MemoryError under the RLIMIT_AS
// fallback), forks the process limit refuses, and as likely a CPU
// limit hit without a word. When the worker stops, no sandbox of its
// calls is left.
func TestSandbox_LimitsAreNamedToTheModel(t *testing.T) {
	e := sandboxEnv(t)
	e.s.Tools.Sandbox.CPUSeconds = 1
	e.s.Tools.Sandbox.MemoryMB = 128
	e.s.Tools.Sandbox.MaxProcesses = 4
	e.startWorker()
	cases := []struct{ session, command, want string }{
		{"sbx-cpu", `echo END-OF-CALL; trap '' XCPU; while :; do :; done`,
			"Command was stopped by the sandbox's CPU time limit of 1 s (tools.sandbox.cpuSeconds): killed (SIGKILL) after"},
		{"sbx-mem", `echo END-OF-CALL; x=$(head -c 200000000 /dev/zero | tr '\0' a); echo ${#x}`,
			"Command was stopped by the sandbox's memory limit of 128 MiB"},
		{"sbx-procs", `echo END-OF-CALL; for i in 1 2 3 4 5 6 7 8; do sleep 1 & done; wait; exit 3`,
			"Command was stopped by the sandbox's process limit of 4 (tools.sandbox.maxProcesses"},
		// Silent: the loop the CPU limit ends runs in a command
		// substitution, of which bash reports nothing.
		{"sbx-cpu-silent", `echo END-OF-CALL; x=$(bash -c 'while :; do :; done'); exit 4`,
			"Command exited with code 4; it may have hit the sandbox's CPU time limit of 1 s per process (tools.sandbox.cpuSeconds): its processes used"},
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		// Touched, not only mapped: a memory cgroup counts what is used.
		cases[1].command = `echo END-OF-CALL; python3 -c 'b = b"a" * (400 << 20)'`
	}
	store, err := session.Open(filepath.Join(e.dataDir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		hostileBash(t, e, c.session, c.command)
		// The tool result the model reads (events carry a preview).
		sess, err := store.Load(c.session)
		if err != nil {
			t.Fatal(err)
		}
		var result string
		for _, en := range sess.Branch(sess.LeafID()) {
			if m := en.Message; m != nil && m.Role == agent.RoleToolResult {
				result = m.Text()
			}
		}
		if !strings.Contains(result, c.want) {
			t.Errorf("%s: the model read %q, want it to name the limit: %q", c.session, result, c.want)
		}
	}
	// Every workspace of this test is under one directory, which every
	// bwrap of its calls names on its command line.
	root := filepath.Dir(t.TempDir())
	e.stopWorker()
	if left := processesNaming(t, root); len(left) != 0 {
		t.Fatalf("sandboxes outlived the worker's stop: %v", left)
	}
}

// processesNaming lists the host's bwrap processes whose command line
// names something under dir.
func processesNaming(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob("/proc/[0-9]*/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	var found []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if filepath.Base(args[0]) == "bwrap" && strings.Contains(string(b), dir+"/") {
			found = append(found, filepath.Base(filepath.Dir(f)))
		}
	}
	return found
}
