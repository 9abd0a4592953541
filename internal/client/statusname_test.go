package client

import (
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
)

// The status names State reports are the ones docs/spec.md and the MCP
// server's schema promise: Temporal's names with their underscores.
func TestStatusName_KeepsTemporalsUnderscores(t *testing.T) {
	for s, want := range map[enumspb.WorkflowExecutionStatus]string{
		enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:          "running",
		enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:        "timed_out",
		enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW: "continued_as_new",
	} {
		if got := StatusName(s); got != want {
			t.Errorf("StatusName(%v) = %q, want %q", s, got, want)
		}
	}
}
