package workflows

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/retry"
)

// replayFixtures are the histories of real runs on the embedded server,
// recorded with the v0.1.0 baseline build, one per workflow shape, each
// with the integration test that records it. All of them are re-recorded
// with
//
//	UPDATE_REPLAY_HISTORY=1 go test -run 'HistoryReplaysOnCurrentCode|BudgetEndsAnApprovalWaitAndReplays|BudgetStopsAPromptAndReplays|SessionWriteWithoutWorkerLandsLater|SessionDeleteRemovesSessionAndOutputs|PolicyAllowForSession|ScheduleFiresAndSkipsOverlap|SessionOwnsItsSettings|ApprovalSurvivesWorkerRestartAndSteerSkipsBatch|SubAgentRunsAChildSession|TopShowsWhatEachJobDoes|WorktreePerSession|FullResults|CheckpointPerTurn' ./test/integration
//
// after an intended change of a workflow's commands that no running
// prompt can meet (docs/spec.md, "Upgrades").
var replayFixtures = map[string]string{
	"prompt_retry_history.json":            "HistoryReplaysOnCurrentCode: one retried 503, a durable timer, then success",
	"prompt_toolloop_history.json":         "ToolLoopHistoryReplaysOnCurrentCode: tool calls, a retried 503 (its verdict recorded) and threshold compactions",
	"prompt_steer_approval_history.json":   "ApprovalSurvivesWorkerRestartAndSteerSkipsBatch: approve_tool decided after a worker restart, a steer during a tool batch",
	"prompt_job_memo_history.json":         "TopShowsWhatEachJobDoes: the job memo and search attributes at each wait, an approval, an abort",
	"prompt_worktree_history.json":         "WorktreePerSession: a --worktree session's prompt, WorktreeSummary at its end",
	"prompt_subagent_history.json":         "SubAgentRunsAChildSession: a task call's step in the prompt, the sub-agent's prompt its child",
	"prompt_session_settings_history.json": "SessionOwnsItsSettings: a prompt run with its session's settings, not its sender's",
	"prompt_policy_grant_history.json":     "PolicyAllowForSession: an asked bash call approved for the session (RecordGrant)",
	"prompt_budget_history.json":           "BudgetStopsAPromptAndReplays: budget.maxTokens reached, the duration timer, a retried 503",
	"prompt_budget_approval_history.json":  "BudgetEndsAnApprovalWaitAndReplays: budget.maxDurationMs ends an approval wait",
	"compact_retry_history.json":           "CompactHistoryReplaysOnCurrentCode: `starter compact`, its summary call retried with auto_retry events",
	"delete_session_history.json":          "SessionDeleteRemovesSessionAndOutputs: `starter session delete` with full bash outputs",
	"session_write_history.json":           "SessionWriteWithoutWorkerLandsLater: set_model on an idle session",
	"scheduled_prompt_history.json":        "ScheduleFiresAndSkipsOverlap: one ScheduledPrompt run and its child prompt",
	"bash_history.json":                    "BashHistoryReplaysOnCurrentCode: a command the user ran in a session (RPC bash)",
	"session_read_history.json":            "FullResultsInPromptEventsAndShow: one entry read through the workers (SessionRead)",
	"prompt_checkpoint_history.json":       "CheckpointPerTurn: a checkpoint before each turn that may change files (the checkpoints gate)",
}

// Determinism: every recorded history replays on the current code, and
// every history in testdata is one of replayFixtures. A change that
// alters a workflow's commands fails here (docs/spec.md, "Upgrades").
func TestReplay_Fixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/*_history.json")
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		files[i] = filepath.Base(f)
	}
	for name := range replayFixtures {
		if !slices.Contains(files, name) {
			t.Errorf("fixture %s is missing from testdata", name)
		}
	}
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			if _, ok := replayFixtures[name]; !ok {
				t.Fatalf("testdata/%s is no replay fixture: add it to replayFixtures or delete it", name)
			}
			if err := replayFixture(filepath.Join("testdata", name)); err != nil {
				t.Fatalf("replay: %v", err)
			}
		})
	}
}

// replayFixture replays a history file on the current workflows.
func replayFixture(path string) error {
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(Prompt, workflow.RegisterOptions{Name: PromptWorkflowName})
	r.RegisterWorkflowWithOptions(Compact, workflow.RegisterOptions{Name: CompactWorkflowName})
	r.RegisterWorkflowWithOptions(Bash, workflow.RegisterOptions{Name: BashWorkflowName})
	r.RegisterWorkflowWithOptions(DeleteSession, workflow.RegisterOptions{Name: DeleteSessionWorkflowName})
	r.RegisterWorkflowWithOptions(SessionWrite, workflow.RegisterOptions{Name: SessionWriteWorkflowName})
	r.RegisterWorkflowWithOptions(ScheduledPrompt, workflow.RegisterOptions{Name: ScheduledPromptWorkflowName})
	r.RegisterWorkflowWithOptions(SessionRead, workflow.RegisterOptions{Name: SessionReadWorkflowName})
	return r.ReplayWorkflowHistoryFromJSONFile(nil, path)
}

// docs/spec.md 2.9 (the verdict is history): a later release may
// classify an error text differently (every corpus round changes some
// verdicts). A running prompt must not notice: its
// replay follows the verdict the history recorded. The test rewrites the
// retried 503 of a recorded history into a text today's classifier calls
// fatal; the history still replays (the workflow retries, as the run
// did), since the verdict is in its side-effect marker.
func TestReplay_RecordedVerdictWinsOverTheClassifier(t *testing.T) {
	const fatalText = "the provider said something no classifier release retries"
	if c := retry.Classify(retry.Outcome{StopReason: "error", ErrorMessage: fatalText}); c.Class.Retryable() {
		t.Fatalf("precondition: %q must not be retryable today, got %s", fatalText, c.Class)
	}
	replay := func(fixture string) error {
		return replayFixture(rewriteFailedModelCall(t, fixture, fatalText))
	}
	if err := replay("testdata/prompt_toolloop_history.json"); err != nil {
		t.Fatalf("a history with its verdict recorded must replay whatever the classifier says now: %v", err)
	}
}

// rewriteFailedModelCall copies a history fixture with the error text of
// its failed CallModel result replaced, and returns the copy's path.
func rewriteFailedModelCall(t *testing.T, fixture, text string) string {
	t.Helper()
	raw, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	var hist map[string]any
	if err := json.Unmarshal(raw, &hist); err != nil {
		t.Fatal(err)
	}
	rewritten := 0
	for _, ev := range hist["events"].([]any) {
		attrs, ok := ev.(map[string]any)["activityTaskCompletedEventAttributes"].(map[string]any)
		if !ok {
			continue
		}
		payload := attrs["result"].(map[string]any)["payloads"].([]any)[0].(map[string]any)
		data, err := base64.StdEncoding.DecodeString(payload["data"].(string))
		if err != nil {
			t.Fatal(err)
		}
		var res map[string]any
		if json.Unmarshal(data, &res) != nil || res["stopReason"] != "error" {
			continue
		}
		res["errorMessage"] = text
		data, err = json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		payload["data"] = base64.StdEncoding.EncodeToString(data)
		rewritten++
	}
	if rewritten != 1 {
		t.Fatalf("%s: %d failed model calls, want exactly 1", fixture, rewritten)
	}
	out, err := json.Marshal(hist)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), filepath.Base(fixture))
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
