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

// Determinism of the SessionWrite workflow (set_model, set_thinking_level
// or set_session_name on an idle session): a real write replays on the
// current code. Regenerate with UPDATE_REPLAY_HISTORY=1 go test -run
// SessionWriteWithoutWorker ./test/integration
func TestReplay_SessionWriteHistory(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(SessionWrite, workflow.RegisterOptions{Name: SessionWriteWorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/session_write_history.json"); err != nil {
		t.Fatalf("replay: %v", err)
	}
}
