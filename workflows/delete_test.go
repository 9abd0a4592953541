package workflows

import (
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Determinism of the DeleteSession workflow (`starter session delete`): a
// real deletion of a session with full bash outputs replays on the
// current code. Regenerate with UPDATE_REPLAY_HISTORY=1 go test -run
// SessionDeleteRemovesSessionAndOutputs ./test/integration
// Spec 14.3.3.
func TestReplay_DeleteSessionHistory(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(DeleteSession, workflow.RegisterOptions{Name: DeleteSessionWorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/delete_session_history.json"); err != nil {
		t.Fatalf("replay: %v", err)
	}
}
