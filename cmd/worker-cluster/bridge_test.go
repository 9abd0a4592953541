package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 22: the sandbox runner starts the worker binary as the egress
// bridge (internal/egress): with __egress-bridge first, the binary
// listens, runs the command with the proxy variables set and returns its
// status, instead of parsing worker flags.
func TestMain_RunsAsEgressBridge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the cluster worker")
	}
	bin := filepath.Join(t.TempDir(), "worker-cluster")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "__egress-bridge", "--socket", filepath.Join(t.TempDir(), "none.sock"),
		"--listen", "127.0.0.1:0", "--", "sh", "-c", `echo "$HTTPS_PROXY"; exit 4`)
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 4 || !strings.HasPrefix(string(out), "http://127.0.0.1:") {
		t.Fatalf("worker-cluster __egress-bridge: %v, output %q; want the command's status 4 and its HTTPS_PROXY", err, out)
	}
}
