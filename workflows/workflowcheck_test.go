package workflows

import (
	"os/exec"
	"strings"
	"testing"
)

// Determinism: the SDK's workflowcheck finds no non-deterministic call
// (time.Now, rand, goroutines, map ranges, ...) reachable from the
// workflows of this package. The checker is a tool of the module (go.mod
// pins its version), so `go tool workflowcheck` needs no network once the
// module cache holds it. Skipped under -short (it builds the checker).
func TestWorkflowcheck_Clean(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs go.temporal.io/sdk/contrib/tools/workflowcheck")
	}
	cmd := exec.Command("go", "tool", "workflowcheck", "./...")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool workflowcheck ./workflows/...: %v\n%s", err, strings.TrimSpace(string(out)))
	}
}
