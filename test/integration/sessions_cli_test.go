package integration

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"

	"github.com/durableagent/durableagent/internal/cli"
)

// sessionLine is what this test reads of a `starter sessions --json` line.
type sessionLine struct {
	ID, Status, Workspace, LastPrompt, Error string
}

func (e *env) sessions(t *testing.T, flags ...string) []sessionLine {
	t.Helper()
	code, out, stderr := e.starter(append([]string{"sessions", "--json"}, flags...)...)
	if code != cli.ExitOK || stderr != "" {
		t.Fatalf("sessions: exit %d\n%s%s", code, out, stderr)
	}
	var got []sessionLine
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var s sessionLine
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("sessions line %q: %v", l, err)
		}
		got = append(got, s)
	}
	return got
}

// `starter prompt -c` continues the most recent session of its workspace,
// and `starter sessions` shows it first, completed, with that prompt; a
// session whose prompt runs shows as running, one whose prompt waits for
// an approval as waiting for approval, and an ended one how it ended:
// failed with its error's first line, budget stop naming the limit,
// aborted; --failed and --running keep those (issue 39 item 4);
// --continue where no session works says so in one line.
func TestIntegration_SessionsAndContinue(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	w1, w2 := t.TempDir(), t.TempDir()
	for _, p := range [][]string{{"s1", w1, "first"}, {"s2", w2, "second"}} {
		if code, out, stderr := e.starter("prompt", "--session", p[0], "--workspace", p[1], p[2]); code != cli.ExitOK {
			t.Fatalf("prompt %s: exit %d\n%s%s", p[0], code, out, stderr)
		}
	}
	code, out, stderr := e.starter("prompt", "-c", "--workspace", w1, "again")
	if code != cli.ExitOK || !strings.Contains(out, "Scripted reply to: again") {
		t.Fatalf("prompt -c: exit %d\n%s%s", code, out, stderr)
	}
	got := e.sessions(t)
	if len(got) != 2 || got[0] != (sessionLine{"s1", "completed", w1, "again", ""}) || got[1] != (sessionLine{"s2", "completed", w2, "second", ""}) {
		t.Fatalf("sessions after prompt -c in %s: %+v", w1, got)
	}

	// --continue where no session works is one line naming the directory
	// (chat resolves it the same way, after its terminal check, which a
	// test without a terminal meets first: test/badinput).
	empty := t.TempDir()
	for _, args := range [][]string{{"prompt", "--continue", "--workspace", empty, "hi"}} {
		code, _, stderr := e.starter(args...)
		want := "starter " + args[0] + ": --continue: no session in " + empty + " to continue"
		if code != cli.ExitUsage || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
			t.Fatalf("%s: exit %d, stderr %q", args[0], code, stderr)
		}
	}

	if code, out, stderr := e.starter("prompt", "--session", "s3", "--workspace", w2, "--detach", "--fault", "hang:60s", "slow"); code != cli.ExitOK {
		t.Fatalf("detached prompt: exit %d\n%s%s", code, out, stderr)
	}
	e.waitEvent("s3", 30*time.Second, isType(agent.EventTurnStart))
	got = e.sessions(t)
	if len(got) != 3 || got[0].ID != "s3" || got[0].Status != "running" {
		t.Fatalf("sessions while s3 runs: %+v", got)
	}
	if code, _, stderr := e.starter("abort", "--session", "s3"); code != cli.ExitOK {
		t.Fatalf("abort: exit %d %s", code, stderr)
	}
	e.ended("s3")

	if code, out, stderr := e.starter("prompt", "--session", "s4", "--workspace", w2, "--fault", "400 bad request: messages.0 is malformed\nsecond line", "x"); code != cli.ExitFailed {
		t.Fatalf("failing prompt: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, stderr := e.starter("prompt", "--session", "s5", "--workspace", w2, "--budget.maxTokens", "1", "--fault", "tool:ls {}", "y"); code != cli.ExitFailed {
		t.Fatalf("budget prompt: exit %d\n%s%s", code, out, stderr)
	}
	if code, out, stderr := e.starter("prompt", "--session", "s6", "--workspace", w2, "--detach", "--tools.requireApproval", "bash",
		"--fault", `tool:bash {"command":"true"}`, "z"); code != cli.ExitOK {
		t.Fatalf("approval prompt: exit %d\n%s%s", code, out, stderr)
	}
	e.waitEvent("s6", 30*time.Second, isType(agent.EventToolApprovalRequest))
	byID := map[string]sessionLine{}
	for _, s := range e.sessions(t) {
		byID[s.ID] = s
	}
	if s := byID["s3"]; s.Status != "aborted" {
		t.Fatalf("aborted session: %+v", s)
	}
	if s := byID["s4"]; s.Status != "failed" || !strings.Contains(s.Error, "messages.0 is malformed") || strings.Contains(s.Error, "second line") {
		t.Fatalf("failed session: %+v, want its error's first line", s)
	}
	if s := byID["s5"]; s.Status != "budget stop" || !strings.HasPrefix(s.Error, "budget.maxTokens 1 reached") {
		t.Fatalf("budget-stopped session: %+v", s)
	}
	if s := byID["s6"]; s.Status != "waiting for approval" {
		t.Fatalf("session waiting for approval: %+v", s)
	}
	if got := e.sessions(t, "--failed"); len(got) != 2 || got[0].ID != "s5" || got[1].ID != "s4" {
		t.Fatalf("sessions --failed: %+v", got)
	}
	if got := e.sessions(t, "--running"); len(got) != 1 || got[0].ID != "s6" {
		t.Fatalf("sessions --running: %+v", got)
	}
	if code, _, stderr := e.starter("abort", "--session", "s6"); code != cli.ExitOK {
		t.Fatalf("abort: exit %d %s", code, stderr)
	}
}
