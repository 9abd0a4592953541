package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/testserver"
)

// Issue 37 item 7, with a worker and the sandbox: safety lists given by
// repeating a flag keep every value. `--tools.policy 'deny bash'
// --tools.policy 'allow read'` denies the bash call (at 1dc3898 the second
// flag replaced the first and bash ran), and `--tools.requireApproval bash
// --tools.requireApproval edit` asks before bash runs (at 1dc3898 it ran
// unasked).
func TestIntegration_RepeatedListFlagsKeepEveryRule(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	call := `tool:bash {"command":"touch ran"}`

	denied, ws := testserver.Session("listflag-deny"), t.TempDir()
	code, out, stderr := e.starter("prompt", "--session", denied, "--workspace", ws,
		"--tools.policy", "deny bash", "--tools.policy", "allow read",
		"--fault", call, "--fault", "text:done", "touch it")
	if code != cli.ExitOK {
		t.Fatalf("prompt: exit %d\n%s%s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Fatal("bash ran under --tools.policy 'deny bash' --tools.policy 'allow read'")
	}
	var end agent.Event
	for _, ev := range e.events(denied) {
		if ev.Type == agent.EventToolExecutionEnd {
			end = ev
		}
	}
	if !end.IsError || end.Policy != "deny" || !strings.Contains(end.Why, "deny bash") {
		t.Fatalf("bash call's end: isError %v policy %q why %q, want denied by rule deny bash", end.IsError, end.Policy, end.Why)
	}

	asked, ws2 := testserver.Session("listflag-ask"), t.TempDir()
	code, out, stderr = e.starter("prompt", "--session", asked, "--workspace", ws2, "--detach",
		"--tools.requireApproval", "bash", "--tools.requireApproval", "edit",
		"--fault", call, "--fault", "text:done", "touch it")
	if code != cli.ExitOK {
		t.Fatalf("prompt: exit %d\n%s%s", code, out, stderr)
	}
	first := e.waitEvent(asked, time.Minute, func(ev agent.Event) bool {
		return ev.Type == agent.EventToolApprovalRequest || ev.Type == agent.EventToolExecutionEnd
	})
	if first.Type != agent.EventToolApprovalRequest || first.ToolName != "bash" {
		t.Fatalf("under --tools.requireApproval bash --tools.requireApproval edit the bash call did not ask: %s %+v", first.Type, first)
	}
	if _, err := os.Stat(filepath.Join(ws2, "ran")); err == nil {
		t.Fatal("bash ran before it was approved")
	}
	if code, out, stderr := e.starter("approve", "--session", asked, "--deny", first.ToolCallID); code != cli.ExitOK {
		t.Fatalf("approve --deny: exit %d\n%s%s", code, out, stderr)
	}
	e.ended(asked)
}
