package integration

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
)

// bashCall is a scripted model's bash call of command.
func bashCall(command string) string {
	b, _ := json.Marshal(map[string]any{"command": command})
	return "tool:bash " + string(b)
}

// toolTexts maps each tool call's id to its result text.
func toolTexts(evs []agent.Event) map[string]string {
	out := map[string]string{}
	for _, ev := range evs {
		if ev.Type == agent.EventToolExecutionEnd && ev.ToolResult != nil {
			for _, b := range ev.ToolResult.Content {
				out[ev.ToolCallID] += b.Text
			}
		}
	}
	return out
}

// Issue 37 item 4 (docs/spec.md 15.3.2), with a real worker and
// bubblewrap: under "deny bash prefix:git push" and "deny bash prefix:rm
// -rf <dir>", a scripted model tries the rewrites that walked around them
// (chained, env, bash -c, quoted, git -C, an assignment, a leading
// newline, 1 KB of padding; rm -fr, rm -r -f, rm -Rf, sudo). None runs:
// the remote has no branch, the directory is still there, and each call's
// result is the deny the model reads.
func TestIntegration_PolicyDenyRewrites(t *testing.T) {
	e := sandboxEnv(t)
	ws := t.TempDir()
	victim := filepath.Join(ws, "victim")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "--bare", "remote.git")
	git("init", "-q", ".")
	git("commit", "-q", "--allow-empty", "-m", "first")
	git("remote", "add", "origin", "remote.git")
	if err := os.WriteFile(filepath.Join(ws, ".gitignore"), []byte("remote.git/\nvictim/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(victim, 0o755); err != nil {
		t.Fatal(err)
	}
	e.s.Tools.Policy = []string{"deny bash prefix:git push", "deny bash prefix:rm -rf " + victim}
	e.startWorker()

	rewrites := []string{
		"true && git push origin main",
		"env git push origin main",
		`bash -c "git push origin main"`,
		`"git" push origin main`,
		"git -C . push origin main",
		"GIT_TRACE=0 git push origin main",
		"\ngit push origin main",
		strings.Repeat(" ", 1100) + "git push origin main",
		"rm -fr " + victim,
		"rm -r -f " + victim,
		"rm -Rf " + victim,
		"sudo rm -rf " + victim + " || rm -rf " + victim,
	}
	faults := make([]string, 0, len(rewrites)+1)
	for _, c := range rewrites {
		faults = append(faults, bashCall(c))
	}
	e.startIn("rewrites", ws, "push it and clean up", append(faults, "text:done")...)
	if end := e.ended("rewrites"); end.Status != agent.StatusCompleted {
		t.Fatalf("prompt_end %+v", end)
	}

	texts := toolTexts(e.events("rewrites"))
	if len(texts) != len(rewrites) {
		t.Fatalf("%d tool results, want %d: %q", len(texts), len(rewrites), texts)
	}
	for id, text := range texts {
		if !strings.HasPrefix(text, "Tool call denied by the approval policy (rule ") {
			t.Errorf("call %s ran: %q", id, text)
		}
	}
	if out, _ := exec.Command("git", "--git-dir", filepath.Join(ws, "remote.git"), "branch", "--list").Output(); len(out) > 0 {
		t.Errorf("a rewrite of git push ran: the remote has %q", out)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("a rewrite of rm -rf ran: %v", err)
	}
}

// Issue 37 item 5 (docs/spec.md 15.3.4), with a real worker and
// bubblewrap: approving "env true" for the session (starter approve
// --for-session) covers that exact command only, and the approval
// question says so; the model's next call, "env sh -c 'touch pwned'",
// asks again instead of running, and denied it never runs.
func TestIntegration_PolicyWrapperGrantIsExact(t *testing.T) {
	e := sandboxEnv(t)
	ws := t.TempDir()
	e.s.Tools.Policy = []string{"ask bash"}
	e.startWorker()

	e.startIn("wrapper", ws, "check", bashCall("env true"), bashCall("env sh -c 'touch pwned'"), "text:done")
	first := e.approvalOf("wrapper", "env true")
	if !strings.Contains(first.SessionScope, "this exact command only (env runs other commands)") {
		t.Fatalf("the approval question says %q for the session, want the exact command only", first.SessionScope)
	}
	if code, out, stderr := e.starter("events", "--session", "wrapper"); code != cli.ExitOK || !strings.Contains(out, "--for-session allows this exact command only (env runs other commands)") {
		t.Fatalf("starter events: exit %d, does not say what --for-session allows\n%s%s", code, out, stderr)
	}
	if code, out, stderr := e.starter("approve", "--session", "wrapper", "--for-session", first.ToolCallID); code != cli.ExitOK {
		t.Fatalf("approve --for-session: exit %d\n%s%s", code, out, stderr)
	}
	next := e.waitEvent("wrapper", 30*time.Second, func(ev agent.Event) bool {
		return ev.ToolCallID != first.ToolCallID && ev.ToolCallID != "" &&
			(ev.Type == agent.EventToolApprovalRequest || ev.Type == agent.EventToolExecutionEnd)
	})
	if next.Type != agent.EventToolApprovalRequest {
		t.Fatalf("env sh -c ran under the grant of env true: %+v", next)
	}
	if code, out, stderr := e.starter("approve", "--session", "wrapper", "--deny", next.ToolCallID); code != cli.ExitOK {
		t.Fatalf("deny: exit %d\n%s%s", code, out, stderr)
	}
	if end := e.ended("wrapper"); end.Status != agent.StatusCompleted {
		t.Fatalf("prompt_end %+v", end)
	}
	if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil {
		t.Fatal("env sh -c 'touch pwned' ran")
	}
}
