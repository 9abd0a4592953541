package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/workflows"
)

// policyGrantFixture is the history of a prompt whose asked call was
// approved for the session (workflows/policy_test.go replays it).
var policyGrantFixture = filepath.Join("..", "..", "workflows", "testdata", "prompt_policy_grant_history.json")

// Issue 22, "allow for this session" end to end on the embedded server:
// under tools.policy "ask bash prefix:touch" the first touch asks (the
// request names the rule); `starter approve --for-session` runs it and
// keeps the grant; a touch in a later prompt of the same session runs
// without asking, its tool_execution_end naming the grant, while another
// session still asks.
func TestIntegration_PolicyAllowForSession(t *testing.T) {
	e := newEnv(t)
	e.s.Tools.Policy = []string{"ask bash prefix:touch"}
	e.startWorker()
	ws := t.TempDir()

	e.startIn("granted", ws, "make a", `tool:bash {"command":"touch a.txt"}`, `text:made a`)
	first := e.approvalOf("granted", "a.txt")
	if first.Policy != "ask" || first.Why != `rule 1 "ask bash prefix:touch"` {
		t.Fatalf("tool_approval_request policy %q why %q", first.Policy, first.Why)
	}
	code, out, stderr := e.starter("approve", "--session", "granted", "--for-session", first.ToolCallID)
	if code != cli.ExitOK || !strings.Contains(out, "approved tool call "+first.ToolCallID+" in session granted, and its like for the rest of the session") {
		t.Fatalf("approve --for-session: exit %d\n%s%s", code, out, stderr)
	}
	if end := e.ended("granted"); end.Status != agent.StatusCompleted {
		t.Fatalf("first prompt_end %+v", end)
	}
	// Its history (the RecordGrant local activity) replays;
	// UPDATE_REPLAY_HISTORY=1 writes the fixture that workflows'
	// TestReplay_Fixtures replays.
	exportAndReplay(t, e, workflows.WorkflowID("granted"), "", policyGrantFixture)

	// A later prompt of the same session: the touch runs at once.
	e.startIn("granted", ws, "make b", `tool:bash {"command":"touch b.txt"}`, `text:made b`)
	if end := e.ended("granted"); end.Status != agent.StatusCompleted {
		t.Fatalf("second prompt_end %+v", end)
	}
	evs := e.events("granted")
	var ends []agent.Event
	for _, ev := range evs {
		if ev.Type == agent.EventToolApprovalRequest {
			t.Fatalf("the second prompt asked: %+v", ev)
		}
		if ev.Type == agent.EventToolExecutionEnd {
			ends = append(ends, ev)
		}
	}
	if len(ends) != 1 || ends[0].IsError || ends[0].Policy != "allow" ||
		ends[0].Why != "allowed for this session (bash touch … under ask bash prefix:touch)" {
		t.Fatalf("second prompt's tool ends %+v", ends)
	}
	for _, f := range []string{"a.txt", "b.txt"} {
		if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}

	// The grant is the session's: another session still asks.
	e.startIn("other", t.TempDir(), "make c", `tool:bash {"command":"touch c.txt"}`, `text:made c`)
	other := e.approvalOf("other", "c.txt")
	if code, out, stderr := e.starter("approve", "--session", "other", "--deny", other.ToolCallID); code != cli.ExitOK {
		t.Fatalf("deny in the other session: exit %d\n%s%s", code, out, stderr)
	}
	e.ended("other")
}
