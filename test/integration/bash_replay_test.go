package integration

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/workflows"
)

// bashFixture is the history of a command the user ran in a session (the
// Bash workflow, RPC bash); workflows/replay_test.go replays it.
var bashFixture = filepath.Join("..", "..", "workflows", "testdata", "bash_history.json")

// Determinism of the Bash workflow (RPC bash): a real command run in a
// session's workspace and recorded in the session replays on the current
// code (docs/spec.md 19.2: one fixture per workflow shape).
func TestIntegration_BashHistoryReplaysOnCurrentCode(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := e.c.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: workflows.WorkflowID("replay-bash"), TaskQueue: e.k.TaskQueue},
		workflows.BashWorkflowName, workflows.BashInput{SessionID: "replay-bash", Command: "echo replayed", Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var res workflows.BashResult
	err = run.Get(ctx, &res)
	if err != nil || res.Status != agent.StatusCompleted || res.ExitCode == nil || *res.ExitCode != 0 || !strings.Contains(res.Preview, "replayed") {
		t.Fatalf("bash: %+v %v, want echo's output and exit 0", res, err)
	}
	exportAndReplay(t, e, run.GetID(), run.GetRunID(), bashFixture)
}
