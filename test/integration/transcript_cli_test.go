package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
)

// Issue 23: `starter events --follow` prints the transcript a person
// follows: a running command's output as it comes (each line once, the
// rest at its end with its exit code), every assistant message (the
// answer before a follow-up too), and the follow-up as it is delivered.
func TestIntegration_FollowPrintsTranscript(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	ws := t.TempDir()
	e.startIn("transcript", ws, "count the ticks",
		`tool:bash {"command":"for i in 1 2 3 4 5; do echo tick$i; sleep 1; done; exit 3"}`, `text:first answer`, `text:second answer`)
	e.waitEvent("transcript", 30*time.Second, func(ev agent.Event) bool { return ev.Type == agent.EventToolExecutionStart })
	if code, out, stderr := e.starter("follow-up", "--session", "transcript", "then say bye"); code != cli.ExitOK {
		t.Fatalf("follow-up: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr := e.starter("events", "--session", "transcript", "--follow")
	if code != cli.ExitOK {
		t.Fatalf("events --follow: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	at := 0
	for _, want := range []string{"› count the ticks", "▶ bash for i in", "tick1", "tick5", "  ✗ bash: Command exited with code 3",
		"first answer", "› then say bye", "second answer"} {
		i := strings.Index(out[at:], want)
		if i < 0 {
			t.Fatalf("output lacks %q after byte %d:\n%s", want, at, out)
		}
		at += i + len(want)
	}
	for _, tick := range []string{"tick1", "tick2", "tick3", "tick4", "tick5"} {
		if n := strings.Count(out, tick); n != 1 {
			t.Errorf("%s printed %d times, want once:\n%s", tick, n, out)
		}
	}
	if !strings.Contains(out, "  │ tick") {
		t.Errorf("no output printed while the command ran:\n%s", out)
	}
	if strings.Count(out, "first answer\n") != 1 || strings.Count(out, "second answer\n") != 1 {
		t.Errorf("an answer printed other than once:\n%s", out)
	}
}
