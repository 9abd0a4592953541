package integration

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
)

// budgetApprovalFixture is the history of a prompt whose
// budget.maxDurationMs ended an approval wait. Regenerate with UPDATE_REPLAY_HISTORY=1 go test
// -run BudgetEndsAnApprovalWaitAndReplays ./test/integration
var budgetApprovalFixture = filepath.Join("..", "..", "workflows", "testdata", "prompt_budget_approval_history.json")

// Issue 22 on the embedded server: a call the policy asks for, in a job
// nobody watches, waits until budget.maxDurationMs and no longer: the
// call gets a result naming the limit, the prompt ends naming it, and
// its history replays on the current code.
func TestIntegration_BudgetEndsAnApprovalWaitAndReplays(t *testing.T) {
	e := newEnv(t)
	e.s.Budget.MaxDurationMs = 3000
	e.s.Tools.Policy = []string{"ask write path:*.conf"}
	e.startWorker()
	in := client.PromptInput(e.s, "budget-approval", "write the config")
	in.Workspace = t.TempDir()
	in.Model.Faults = []string{`tool:write {"path":"app.conf","content":"x"}`, `text:never`}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.result(run)
	// "ran 3s", or more when a loaded machine starts the workflow task
	// that sees the timer late.
	if err == nil || res.Status != agent.StatusFailed || !strings.HasPrefix(res.Error, "budget.maxDurationMs 3000 reached: ran ") {
		t.Fatalf("result %+v %v, want failed naming budget.maxDurationMs", res, err)
	}
	var ended *agent.Event
	for _, ev := range e.events("budget-approval") {
		if ev.Type == agent.EventToolExecutionEnd {
			ended = &ev
		}
	}
	if ended == nil || !ended.IsError {
		t.Fatalf("tool_execution_end %+v, want the write ended in error", ended)
	}
	exportAndReplay(t, e, run.GetID(), run.GetRunID(), budgetApprovalFixture)
}
