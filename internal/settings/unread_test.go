package settings

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// Issue 20 item 11: a key a program does not read, set in a source it
// loads (flag, environment, settings file), is named in one line: the
// key, where it was set, the program, and where the key takes effect. A
// worker given tools.requireApproval (a prompt setting) is told so and
// pointed at tools.workerRequireApproval, its own floor.
// Spec 15.2.1.
func TestUnread_WorkerNamesPromptSettingsItIgnores(t *testing.T) {
	file := writeYAML(t, "tools:\n  requireApproval: [bash]\n  allowedRoots: [/srv]\n")
	for name, tc := range map[string]struct {
		file string
		env  map[string]string
		args []string
		from string
	}{
		"flag": {args: []string{"--tools.requireApproval", "bash"}, from: "flag --tools.requireApproval"},
		"env":  {env: map[string]string{"DURABLE_AGENT_TOOLS_REQUIREAPPROVAL": "bash"}, from: "env DURABLE_AGENT_TOOLS_REQUIREAPPROVAL"},
		"file": {file: file, from: "file " + file + ":2"},
	} {
		t.Run(name, func(t *testing.T) {
			newEnv(t, tc.env)
			fs := pflag.NewFlagSet("worker", pflag.ContinueOnError)
			AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			_, vals, err := Explain(LoadOptions{File: tc.file, Flags: fs})
			if err != nil {
				t.Fatal(err)
			}
			lines := Unread(vals, "the worker", WorkerReads)
			if len(lines) != 1 {
				t.Fatalf("lines %q, want one (tools.allowedRoots is the worker's)", lines)
			}
			l := lines[0]
			for _, want := range []string{"tools.requireApproval (" + tc.from + ")", "not read by the worker",
				"each prompt", "tools.workerRequireApproval"} {
				if !strings.Contains(l, want) {
					t.Errorf("line %q does not say %q", l, want)
				}
			}
			if strings.Contains(l, "\n") {
				t.Errorf("line %q has a newline", l)
			}
		})
	}

	// Defaults and keys the worker reads are not named.
	newEnv(t, map[string]string{"DURABLE_AGENT_TOOLS_WORKERREQUIREAPPROVAL": "bash", "DURABLE_AGENT_DEV_PORT": "7777"})
	_, vals, err := Explain(LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lines := Unread(vals, "the worker", WorkerReads); len(lines) != 0 {
		t.Fatalf("Unread = %q; want nothing", lines)
	}
}

// Every key's scope says which programs read it, and where it takes
// effect is stated for each key a program can ignore.
func TestKeys_ScopeSaysWhoReads(t *testing.T) {
	want := map[string]string{
		"tools.requireApproval":       ScopePrompt,
		"retry.maxRetries":            ScopePrompt,
		"tools.workerRequireApproval": ScopeWorker,
		"tools.allowedRoots":          ScopeWorker,
		"temporal.address":            ScopeShared,
		"model.provider":              ScopeShared,
		"stream.intervalMs":           ScopeShared,
		"model.credential":            ScopeUnused,
	}
	for _, k := range Keys() {
		if s, ok := want[k.Key]; ok && k.Scope != s {
			t.Errorf("%s scope %q, want %q", k.Key, k.Scope, s)
		}
		if WorkerReads(k) != (k.Scope == ScopeShared || k.Scope == ScopeWorker) {
			t.Errorf("%s: WorkerReads = %t for scope %q", k.Key, WorkerReads(k), k.Scope)
		}
		if k.Scope != ScopeShared && k.TakesEffect() == "" {
			t.Errorf("%s (scope %q) does not say where it takes effect", k.Key, k.Scope)
		}
	}
}
