package integration

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/workflows"
)

// replayFixture is the history the workflows package replays in its unit
// tests. Regenerate it with UPDATE_REPLAY_HISTORY=1 after an intended
// change of the workflow's commands.
var replayFixture = filepath.Join("..", "..", "workflows", "testdata", "prompt_retry_history.json")

// Determinism: the history of a real run (one retried 503, then success)
// replays on the current workflow code without a non-determinism error.
func TestIntegration_HistoryReplaysOnCurrentCode(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	run := e.prompt("replay", e503)
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("result %+v %v", res, err)
	}
	iter := e.c.GetWorkflowHistory(context.Background(), run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		hist.Events = append(hist.Events, ev)
	}
	data, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(hist)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "history.json")
	if os.Getenv("UPDATE_REPLAY_HISTORY") == "1" {
		path = replayFixture
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.Prompt, workflow.RegisterOptions{Name: workflows.PromptWorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, path); err != nil {
		t.Fatalf("replay of a fresh history: %v", err)
	}
}
