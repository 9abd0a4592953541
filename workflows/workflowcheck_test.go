package workflows

import (
	"os/exec"
	"strings"
	"testing"
)

// WorkflowcheckVersion pins the SDK's determinism checker.
const workflowcheckVersion = "v0.6.0"

// Determinism: the SDK's workflowcheck finds no non-deterministic call
// (time.Now, rand, goroutines, map ranges, ...) reachable from the
// workflows of this package. Skipped under -short (it builds the checker).
func TestWorkflowcheck_Clean(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs go.temporal.io/sdk/contrib/tools/workflowcheck")
	}
	cmd := exec.Command("go", "run", "go.temporal.io/sdk/contrib/tools/workflowcheck@"+workflowcheckVersion, "./...")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("workflowcheck ./workflows/...: %v\n%s", err, strings.TrimSpace(string(out)))
	}
}
