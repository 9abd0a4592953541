package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The cluster worker links neither the Temporal server nor the Web UI
// (nor the embedded dev server that wraps them): that is why it exists,
// and one import of internal/stack or internal/devserver would bring
// them back without a compile error.
func TestDeps_NoTemporalServerOrUI(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 50 || !slices.Contains(deps, "go.temporal.io/sdk/client") {
		t.Fatalf("go list -deps listed %d packages without the SDK client: not the worker's dependencies", len(deps))
	}
	for _, d := range deps {
		for _, banned := range []string{"go.temporal.io/server", "github.com/temporalio/ui-server",
			"github.com/durableagent/durableagent/internal/devserver", "github.com/durableagent/durableagent/internal/stack"} {
			if d == banned || strings.HasPrefix(d, banned+"/") {
				t.Errorf("worker-cluster depends on %s", d)
			}
		}
	}
}
