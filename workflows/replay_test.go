package workflows

import (
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Determinism: an exported history of a real run on the embedded server
// (one retried 503, a durable timer, then success) replays on the current
// code. A change that alters the workflow's commands fails here; if the
// change is intended, version it (workflow.GetVersion) or regenerate the
// fixture: UPDATE_REPLAY_HISTORY=1 go test -run HistoryReplays ./test/integration
func TestReplay_PromptRetryHistory(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(Prompt, workflow.RegisterOptions{Name: PromptWorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/prompt_retry_history.json"); err != nil {
		t.Fatalf("replay: %v", err)
	}
}

// Determinism of the tool loop: a real run's history with tool calls, a
// retried 503 and threshold compactions (versioned with GetVersion
// "agent-loop") replays on the current code. Regenerate with
// UPDATE_REPLAY_HISTORY=1 go test -run ToolLoopHistoryReplays ./test/integration
func TestReplay_ToolLoopHistory(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(Prompt, workflow.RegisterOptions{Name: PromptWorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/prompt_toolloop_history.json"); err != nil {
		t.Fatalf("replay: %v", err)
	}
}

// Determinism of the tool loop at the current version ("agent-loop" 3:
// entry ids from the run, an abort that overtakes an answer still gives
// its calls results): the same scenario recorded on the current code.
// Regenerate with UPDATE_REPLAY_HISTORY=1 go test -run
// ToolLoopHistoryReplays ./test/integration
func TestReplay_ToolLoopHistoryCurrentVersion(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(Prompt, workflow.RegisterOptions{Name: PromptWorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/prompt_toolloop_v3_history.json"); err != nil {
		t.Fatalf("replay: %v", err)
	}
}

// Determinism of steering and approval (version "agent-loop" 2): a real
// run's history with an approve_tool update decided after a worker
// restart and a steer signal during a tool batch replays on the current
// code. Regenerate with UPDATE_REPLAY_HISTORY=1 go test -run
// ApprovalSurvivesWorkerRestartAndSteerSkipsBatch ./test/integration
func TestReplay_SteerApprovalHistory(t *testing.T) {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(Prompt, workflow.RegisterOptions{Name: PromptWorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, "testdata/prompt_steer_approval_history.json"); err != nil {
		t.Fatalf("replay: %v", err)
	}
}
