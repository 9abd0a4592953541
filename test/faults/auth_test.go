package faults

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
)

// issue 7: auth.json becomes group- and world-readable under a running
// worker while a prompt waits to retry. The retried model call refuses to
// run without its credential store: the prompt fails with one clear error
// naming the file and the fix, and the session keeps what it had.
func TestFaults_AuthFileWithWrongPermissionsStopsThePromptClearly(t *testing.T) {
	skipShort(t)
	e := newEnv(t, sharedAddress(t))
	e.s.Retry.BaseDelayMs = 2000
	e.startWorker()
	run := e.prompt("authperm", e503)
	e.waitFor("authperm", time.Minute, func(ev agent.Event) bool { return ev.Type == agent.EventAutoRetryStart })
	before := readSession(t, e.s.DataDir, "authperm").raw

	path := filepath.Join(e.s.DataDir, "auth.json")
	if err := os.WriteFile(path, []byte(`{"version":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := e.result(run, time.Minute)
	t.Logf("prompt %s: %v", res.Status, err)
	if res.Status != agent.StatusFailed || err == nil || !strings.Contains(err.Error(), path) ||
		!strings.Contains(err.Error(), "chmod 600") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("prompt %+v, error %v; want failed with one line naming %s and chmod 600", res, err, path)
	}
	if after := readSession(t, e.s.DataDir, "authperm").raw; !bytes.Equal(after, before) {
		t.Fatalf("session file changed:\n%s\nwant\n%s", after, before)
	}
	if f := workflowTaskFailures(history(t, e.c, run.GetID(), run.GetRunID())); len(f) > 0 {
		t.Fatalf("workflow tasks failed: %v", f)
	}
}
