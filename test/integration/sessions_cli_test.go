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
	ID, Status, Workspace, LastPrompt string
}

func (e *env) sessions(t *testing.T) []sessionLine {
	t.Helper()
	code, out, stderr := e.starter("sessions", "--json")
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
// and `starter sessions` shows it first, idle, with that prompt; a
// session whose prompt runs shows as running; --continue where no
// session works says so in one line.
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
	if len(got) != 2 || got[0] != (sessionLine{"s1", "idle", w1, "again"}) || got[1] != (sessionLine{"s2", "idle", w2, "second"}) {
		t.Fatalf("sessions after prompt -c in %s: %+v", w1, got)
	}

	// --continue where no session works is one line naming the directory.
	empty := t.TempDir()
	for _, args := range [][]string{{"prompt", "--continue", "--workspace", empty, "hi"}, {"chat", "--continue", "--workspace", empty}} {
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
}
