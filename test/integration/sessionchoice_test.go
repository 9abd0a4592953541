package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/cli"
)

// Issue 37 item 8, with a worker and the sandbox: a session's workspace is
// fixed when it starts (docs/spec.md 14.2.1, 14.2.5). Without --session a
// prompt starts a new session in the current directory and says its id,
// so a prompt typed in project B runs its bash in B (at 1dc3898 both went
// to one session "default", which kept project A's workspace: B/where was
// never written); naming A's session from B, or with --workspace B, is
// refused in one line naming A before anything starts (a schedule
// naming it too); -c continues the
// newest session of the directory; a command without --session takes the
// newest session of the directory.
func TestIntegration_PromptWithoutSessionStaysInItsDirectory(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	a, b := t.TempDir(), t.TempDir()
	newID := regexp.MustCompile(`new session (\S+) in (\S+) `)
	where := `tool:bash {"command":"pwd > where"}`

	prompt := func(dir string, args ...string) (int, string, string) {
		t.Chdir(dir)
		return e.starter(append([]string{"prompt"}, args...)...)
	}
	started := func(dir string, args ...string) string {
		t.Helper()
		code, out, stderr := prompt(dir, args...)
		if code != cli.ExitOK {
			t.Fatalf("prompt in %s: exit %d\n%s%s", dir, code, out, stderr)
		}
		m := newID.FindStringSubmatch(stderr)
		if m == nil || m[2] != dir {
			t.Fatalf("prompt in %s without --session: stderr %q, want \"new session ID in %s …\"", dir, stderr, dir)
		}
		return m[1]
	}

	// Project A, then project B: each bash runs in its own directory.
	code, out, stderr := prompt(a, "--fault", where, "--fault", "text:ok", "where am I")
	if code != cli.ExitOK {
		t.Fatalf("prompt in A: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = prompt(b, "--fault", where, "--fault", "text:ok", "where am I")
	if code != cli.ExitOK {
		t.Fatalf("prompt in B: exit %d\n%s%s", code, out, stderr)
	}
	for _, dir := range []string{a, b} {
		got, err := os.ReadFile(filepath.Join(dir, "where"))
		if err != nil || strings.TrimSpace(string(got)) != dir {
			t.Fatalf("the prompt typed in %s ran its bash elsewhere: %s/where %q, %v", dir, dir, got, err)
		}
	}

	// Two new sessions, named after their directory.
	idA := started(a, "--fault", "text:ok", "hello A")
	idB := started(b, "--fault", "text:ok", "hello B")
	if idA == idB || !strings.HasPrefix(idA, filepath.Base(a)+"-") {
		t.Fatalf("new sessions %q and %q: want two ids that start with the directory's name", idA, idB)
	}

	// A's session from B, or with --workspace B: refused in one line.
	want := "starter prompt: session " + idA + " works in " + a + ", not " + b
	for _, args := range [][]string{
		{b, "--session", idA, "--fault", where, "run here"},
		{a, "--session", idA, "--workspace", b, "--fault", where, "run there"},
	} {
		code, out, stderr = prompt(args[0], args[1:]...)
		if code != cli.ExitUsage || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
			t.Fatalf("prompt %v: exit %d\nstdout %s\nstderr %q\nwant one line starting %q", args, code, out, stderr, want)
		}
	}
	// A schedule that names A's session with B's workspace: refused too.
	code, _, stderr = e.starter("schedule", "create", "--id", "where-"+idA, "--every", "1h", "--session", idA, "--workspace", b, "run there")
	if code != cli.ExitUsage || !strings.HasPrefix(stderr, "starter schedule create: session "+idA+" works in "+a+", not "+b) {
		t.Fatalf("schedule create --session %s --workspace B: exit %d, stderr %q", idA, code, stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(b, "where")); strings.TrimSpace(string(got)) != b {
		t.Fatalf("a refused prompt ran: %s/where %q", b, got)
	}

	// -c continues the newest session of the directory: A's, not B's
	// (newer) nor A's first.
	code, out, stderr = prompt(a, "-c", "--fault", "text:ok", "again")
	if code != cli.ExitOK || strings.Contains(stderr, "new session") {
		t.Fatalf("prompt -c in A: exit %d\n%s%s", code, out, stderr)
	}
	if texts := userTexts(e.events(idA)); len(texts) == 0 || texts[len(texts)-1] != "again" {
		t.Fatalf("prompt -c in A: session %s's user messages %q, want the last one \"again\"", idA, texts)
	}

	// Without --session, state takes the directory's newest session; a
	// directory without one is a one-line error.
	t.Chdir(b)
	if code, out, stderr := e.starter("state", "--json"); code != cli.ExitOK || !strings.Contains(out, `"sessionId":"`+idB+`"`) {
		t.Fatalf("state in B: exit %d\n%s%s", code, out, stderr)
	}
	empty := t.TempDir()
	t.Chdir(empty)
	code, _, stderr = e.starter("state")
	if code != cli.ExitUsage || stderr != "starter state: no session in "+empty+": give --session ID (starter sessions lists them)\n" {
		t.Fatalf("state in a directory without a session: exit %d, stderr %q", code, stderr)
	}
}
