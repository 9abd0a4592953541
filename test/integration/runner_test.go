package integration

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/tools"
)

// recordingRunner is tools.Local that notes every command it starts: a
// real runner, so the tool calls still run.
type recordingRunner struct {
	mu      sync.Mutex
	scripts []string
}

func (r *recordingRunner) Start(cmd tools.Command) (tools.Process, error) {
	r.mu.Lock()
	r.scripts = append(r.scripts, cmd.Script)
	r.mu.Unlock()
	return tools.Local.Start(cmd)
}

func (r *recordingRunner) FS() tools.FS { return tools.Local.FS() }

func (r *recordingRunner) started() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.scripts)
}

// The worker constructor's Runner option is where every tool call of the
// worker acts (the door for a sandbox): a model's bash call runs through
// the runner the worker was built with, and its output is the result.
func TestIntegration_WorkerToolCallsActThroughItsRunner(t *testing.T) {
	e := newEnv(t)
	r := &recordingRunner{}
	e.ext = app.Extensions{Runner: r}
	e.startWorker()
	res, err := e.result(e.prompt("runner", `tool:bash {"command":"echo through-the-runner"}`, "text:done"))
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if got := r.started(); !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "echo through-the-runner") }) {
		t.Fatalf("commands the worker's runner started: %q, want the model's bash call", got)
	}
	var out string
	for _, ev := range e.events("runner") {
		if ev.Type == agent.EventToolExecutionEnd && ev.ToolResult != nil {
			for _, b := range ev.ToolResult.Content {
				out += b.Text
			}
		}
	}
	if !strings.Contains(out, "through-the-runner") {
		t.Fatalf("bash result %q, want the command's output", out)
	}
}
