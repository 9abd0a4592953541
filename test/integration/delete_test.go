package integration

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/workflows"
)

// deleteFixture is the DeleteSession workflow's replay fixture.
var deleteFixture = filepath.Join("..", "..", "workflows", "testdata", "delete_session_history.json")

// Issue 20 item 7: `starter session delete` removes the session (its
// file) with the full outputs of its truncated bash calls
// (<workspace>/.durable-agent/tmp/<session>) and its checkpoints
// (<dataDir>/checkpoints/<session>, spec 20.1); afterwards state and events
// say the session is unknown, and a second delete says so in one line
// with exit 2. The delete's history replays on the current code
// (regenerate the fixture with UPDATE_REPLAY_HISTORY=1 and -run
// SessionDelete).
// Spec 14.3.3.
func TestIntegration_SessionDeleteRemovesSessionAndOutputs(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	ws := t.TempDir()
	in := client.PromptInput(e.s, "doomed", "print a lot")
	in.Workspace = ws
	in.Model.Faults = []string{`tool:bash {"command":"seq 1 200000"}`, `text:printed`}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	outputs := filepath.Join(ws, ".durable-agent", "tmp", "doomed")
	if fs, err := os.ReadDir(outputs); err != nil || len(fs) == 0 {
		t.Fatalf("full outputs of the truncated bash call: %v %v", fs, err)
	}
	file := filepath.Join(e.dataDir, "sessions", "doomed.jsonl")
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}

	checkpoints := filepath.Join(e.dataDir, "checkpoints", "doomed")
	if _, err := os.Stat(checkpoints); err != nil {
		t.Fatal(err)
	}

	code, out, stderr := e.starter("session", "delete", "--session", "doomed")
	if code != cli.ExitOK || !strings.Contains(out, "deleted session doomed") {
		t.Fatalf("session delete: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	for _, p := range []string{file, outputs, checkpoints} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s after session delete: %v, want it gone", p, err)
		}
	}
	// The fixture is the delete's run, the session's latest.
	desc, err := e.c.DescribeWorkflowExecution(context.Background(), workflows.WorkflowID("doomed"), "")
	if err != nil || desc.GetWorkflowExecutionInfo().GetType().GetName() != workflows.DeleteSessionWorkflowName {
		t.Fatalf("latest run of the session: %v %v", desc, err)
	}
	deleteRun := desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	for _, cmd := range []string{"state", "events"} {
		code, _, stderr := e.starter(cmd, "--session", "doomed")
		if code != cli.ExitUsage || !strings.Contains(stderr, "unknown session doomed") || strings.Count(stderr, "\n") != 1 {
			t.Fatalf("%s after delete: exit %d, stderr %q; want one line saying unknown session", cmd, code, stderr)
		}
	}
	code, out, stderr = e.starter("session", "delete", "--session", "doomed", "--json")
	if code != cli.ExitUsage || !strings.Contains(stderr, "unknown session doomed") || strings.Count(stderr, "\n") != 1 || out != "" {
		t.Fatalf("second delete: exit %d\nstdout %q\nstderr %q; want one line saying unknown session", code, out, stderr)
	}

	exportAndReplay(t, e, workflows.WorkflowID("doomed"), deleteRun, deleteFixture)
}

// A session that runs a prompt is busy: the delete says so, names what
// runs, and deletes nothing; once the prompt is over the delete works.
// Spec 14.3.3.
func TestIntegration_SessionDeleteWhilePromptRunsIsBusy(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	run := e.prompt("busy", "hang")
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := e.k.State(context.Background(), "busy")
		if err == nil && st.IsStreaming {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the prompt never started its model call: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	code, out, stderr := e.starter("session", "delete", "--session", "busy")
	if code != cli.ExitUsage || !strings.Contains(stderr, "session busy") || !strings.Contains(stderr, "running a prompt") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("delete during a prompt: exit %d\nstdout %s\nstderr %q; want one line saying the session is busy with a prompt", code, out, stderr)
	}
	file := filepath.Join(e.dataDir, "sessions", "busy.jsonl")
	if _, err := os.Stat(file); err != nil {
		t.Fatalf("session file after a refused delete: %v", err)
	}
	// A query may time out on a loaded machine: ask again until it answers.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		st, err := e.k.State(context.Background(), "busy")
		if err == nil && st.IsStreaming {
			break
		}
		if err == nil || time.Now().After(deadline) {
			t.Fatalf("prompt after a refused delete: %+v %v; want it still running", st, err)
		}
	}
	if err := e.k.Abort(context.Background(), "busy"); err != nil {
		t.Fatal(err)
	}
	if res, _ := e.result(run); res.Status != agent.StatusAborted {
		t.Fatalf("prompt after abort: %+v", res)
	}
	if code, out, stderr := e.starter("session", "delete", "--session", "busy"); code != cli.ExitOK {
		t.Fatalf("delete after the prompt: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("session file after delete: %v", err)
	}
}
