package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 20 item 11: the cluster worker names, one line each, the settings
// it was given and does not read: a prompt setting (tools.requireApproval)
// and the embedded server's dev.port (it has no --dev). The run then stops
// on the unset model.provider, so no server is needed.
// Spec 15.2.1.
func TestRun_SettingsTheClusterWorkerIgnoresAreNamed(t *testing.T) {
	dir := t.TempDir()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "DURABLE_AGENT_") {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
	t.Setenv("DURABLE_AGENT_HOME", filepath.Join(dir, "home"))
	t.Setenv("DURABLE_AGENT_DEV_PORT", "7777")
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	old := os.Stderr
	os.Stderr = stderr
	code := run([]string{"--tools.requireApproval", "bash", "--tools.workerRequireApproval", "bash"})
	os.Stderr = old
	b, err := os.ReadFile(stderr.Name())
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if code != 2 || len(lines) != 4 {
		t.Fatalf("exit %d, stderr %q; want exit 2, two warnings, that they are said once, and the model.provider refusal", code, b)
	}
	for i, want := range []string{
		"worker: warning: dev.port (env DURABLE_AGENT_DEV_PORT) is not read by the worker",
		"worker: warning: tools.requireApproval (flag --tools.requireApproval) is not read by the worker",
	} {
		if !strings.HasPrefix(lines[i], want) {
			t.Errorf("line %d %q, want %q…", i, lines[i], want)
		}
	}
	if !strings.Contains(lines[3], "no model provider configured") {
		t.Errorf("last line %q", lines[3])
	}
}
