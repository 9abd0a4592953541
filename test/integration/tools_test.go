package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/workflows"
)

// Issue 10 (exactly once) on the real server: a worker stopped gracefully
// (Ctrl-C, a deploy) while bash runs kills the command's process group and
// writes no result; the prompt goes on on the next worker, the model is
// told the command was interrupted and may or may not have completed, with
// the files it changed, and the command is not started again.
func TestIntegration_BashInterruptedByWorkerShutdownIsNotRunAgain(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	ws := t.TempDir()
	in := client.PromptInput(e.s, "interrupt", "run the slow build")
	in.Workspace = ws
	in.Model.Faults = []string{
		`tool:bash {"command":"echo started >> effect.txt; sleep 20; echo finished >> effect.txt"}`,
		`text:checked the build`,
	}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	effect := filepath.Join(ws, "effect.txt")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, _ := os.ReadFile(effect); strings.Contains(string(b), "started") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.stopWorker()
	e.startWorker()

	res, err := e.result(run)
	if err != nil || res.Status != agent.StatusCompleted || res.Text != "checked the build" {
		t.Fatalf("result %+v %v", res, err)
	}
	time.Sleep(500 * time.Millisecond)
	if b, _ := os.ReadFile(effect); string(b) != "started\n" {
		t.Fatalf("effect.txt %q: the command was run again or not stopped", b)
	}
	var end *agent.Event
	for _, ev := range e.events("interrupt") {
		if ev.Type == agent.EventToolExecutionEnd {
			ev := ev
			end = &ev
		}
	}
	// The result names what the command changed since the turn's
	// checkpoint (spec 20.3).
	if end == nil || !end.IsError || end.ToolResult == nil || !strings.HasPrefix(end.ToolResult.Content[0].Text, workflows.ToolInterruptedMessage) ||
		!strings.Contains(end.ToolResult.Content[0].Text, "added effect.txt") {
		t.Fatalf("tool_execution_end %+v", end)
	}
}
