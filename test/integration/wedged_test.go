package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/workflows"
)

// Issue 20 item 1 on the real server: a bash call whose timeout argument
// overflows the activity's start-to-close timeout (9.3e9 s) made Temporal
// refuse the command and fail the workflow task on every retry, so the
// prompt never ended. Now the model gets an error result naming the
// maximum and the prompt completes.
// Spec 13.4.8.
func TestIntegration_BashTimeoutAboveTheMaximumDoesNotWedgeThePrompt(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	ws := t.TempDir()
	in := client.PromptInput(e.s, "huge-timeout", "run it")
	in.Workspace = ws
	in.Model.Faults = []string{`tool:bash {"command":"touch ran","timeout":9.3e9}`, `text:corrected`}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	var res workflows.PromptResult
	if err := run.Get(ctx, &res); err != nil || res.Status != agent.StatusCompleted || res.Text != "corrected" {
		t.Fatalf("prompt: %+v %v, want it to complete after the error result", res, err)
	}
	var end *agent.Event
	for _, ev := range e.events("huge-timeout") {
		if ev.Type == agent.EventToolExecutionEnd {
			ev := ev
			end = &ev
		}
	}
	if end == nil || !end.IsError || end.ToolResult == nil ||
		!strings.Contains(end.ToolResult.Content[0].Text, "timeout 9300000000 s is above the maximum of 86400 s") {
		t.Fatalf("tool_execution_end %+v, want the timeout refused", end)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Fatal("the command ran although its timeout was refused")
	}
}

// Issue 20 item 1: a prompt whose workflow task fails on every attempt
// (here a workflow that panics; in the issue a command Temporal refused)
// cannot process the abort signal. `starter abort` says so in one line
// and names the command that ends it; `starter abort --terminate`
// terminates it with the reason recorded, and the session is free again.
// Spec 13.4.8.
func TestIntegration_AbortSaysHowToEndAPromptWhoseWorkflowTaskKeepsFailing(t *testing.T) {
	e := newEnv(t)
	queue := e.s.Temporal.TaskQueue + "-wedged"
	w := worker.New(e.c, queue, worker.Options{})
	w.RegisterWorkflowWithOptions(func(ctx workflow.Context) error { panic("wedged for the test") },
		workflow.RegisterOptions{Name: "WedgedPrompt"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	id := workflows.WorkflowID("wedged")
	if _, err := e.c.ExecuteWorkflow(context.Background(), sdkclient.StartWorkflowOptions{ID: id, TaskQueue: queue}, "WedgedPrompt"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		d, err := e.c.DescribeWorkflowExecution(context.Background(), id, "")
		if err == nil && d.GetPendingWorkflowTask().GetAttempt() >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the workflow task did not fail twice: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	code, out, stderr := e.starter("abort", "--session", "wedged")
	if code != cli.ExitFailed || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, "cannot process the abort") || !strings.Contains(stderr, "wedged for the test") ||
		!strings.Contains(stderr, "starter abort --session wedged --terminate") {
		t.Fatalf("abort of a wedged prompt: exit %d\nstdout %q\nstderr %q", code, out, stderr)
	}

	code, out, stderr = e.starter("abort", "--session", "wedged", "--terminate")
	if code != cli.ExitOK || !strings.Contains(out, "terminated session wedged's prompt") {
		t.Fatalf("abort --terminate: exit %d\nstdout %q\nstderr %q", code, out, stderr)
	}
	d, err := e.c.DescribeWorkflowExecution(context.Background(), id, "")
	if err != nil || d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED {
		t.Fatalf("after --terminate: %v %v, want terminated", d.GetWorkflowExecutionInfo().GetStatus(), err)
	}
	it := e.c.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	ev, err := it.Next()
	if err != nil || !strings.Contains(ev.GetWorkflowExecutionTerminatedEventAttributes().GetReason(), "could not process the abort") {
		t.Fatalf("termination event %v %v, want the reason recorded", ev, err)
	}

	// A healthy prompt is never terminated: it gets the abort.
	e.s.Retry.BaseDelayMs = 60_000
	e.startWorker()
	run := e.prompt("healthy", e503)
	e.waitEvent("healthy", 30*time.Second, isType(agent.EventAutoRetryStart))
	code, out, stderr = e.starter("abort", "--session", "healthy", "--terminate")
	if code != cli.ExitOK || !strings.Contains(out, "sent abort to session healthy") {
		t.Fatalf("abort --terminate of a healthy prompt: exit %d\nstdout %q\nstderr %q", code, out, stderr)
	}
	if res, _ := e.result(run); res.Status != agent.StatusAborted {
		t.Fatalf("healthy prompt %+v, want aborted", res)
	}
}
