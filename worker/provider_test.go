package main

import (
	"strings"
	"testing"
)

// Outside --dev a worker with no model provider configured refuses to
// start instead of answering every prompt with the scripted fake; naming
// scripted explicitly is the opt-in.
func TestRun_WithoutDevOrModelProviderRefusesToStart(t *testing.T) {
	code, stderr := runCaptured(t)
	if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "worker: no model provider configured: set model.provider") {
		t.Fatalf("exit %d, stderr %q; want 2 and one line refusing to start", code, stderr)
	}
	code, stderr = runCaptured(t, "--model.provider", "scripted", "--temporal.address", "127.0.0.1:1")
	if code != 2 || !strings.Contains(stderr, "cannot reach Temporal at 127.0.0.1:1") {
		t.Fatalf("explicit scripted: exit %d, stderr %q; want it to get as far as dialling", code, stderr)
	}
}
