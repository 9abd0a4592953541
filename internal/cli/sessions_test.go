package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
)

// writeSession writes session id, created in workspace cwd, with one
// user message (text) at ts and an answer that reported usage u (nil:
// none).
func writeSession(t *testing.T, home, id, cwd, text string, ts time.Time, u *agent.Usage) {
	t.Helper()
	st, err := session.Open(filepath.Join(home, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Init(id, cwd, ""); err != nil {
		t.Fatal(err)
	}
	um := agent.TextMessage(agent.RoleUser, text)
	am := agent.TextMessage(agent.RoleAssistant, "done")
	am.Usage = u
	if _, err := st.Append(id,
		session.Entry{Type: session.TypeMessage, ID: id + "u", Timestamp: ts, Message: &um},
		session.Entry{Type: session.TypeMessage, ID: id + "a", ParentID: id + "u", Timestamp: ts.Add(time.Second), Message: &am}); err != nil {
		t.Fatal(err)
	}
}

// `starter sessions` lists every session newest first with its workspace,
// its last prompt on one bounded line, its last activity and its usage;
// without Temporal the status is "unknown" and stderr says why.
func TestSessions_NewestFirstWithWorkspacePromptAndUsage(t *testing.T) {
	home := t.TempDir()
	// After the files' creation (their header's time): another day.
	day := time.Now().Add(48 * time.Hour).Truncate(time.Second)
	long := "fix the failing test\nin pkg/foo " + strings.Repeat("and then some more ", 10)
	writeSession(t, home, "old", "/src/a", "hello", day, nil)
	writeSession(t, home, "new", "/src/b", long, day.Add(time.Hour),
		&agent.Usage{Input: 1000, Output: 234, Cost: agent.UsageCost{Total: 0.0125}})

	code, out, stderr := run(t, map[string]string{"DURABLE_AGENT_HOME": home}, "sessions")
	if code != ExitOK {
		t.Fatalf("sessions: exit %d\n%s%s", code, out, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "new  unknown  ") || !strings.HasPrefix(lines[1], "old  unknown  ") {
		t.Fatalf("want new then old, one line each:\n%s", out)
	}
	for _, want := range []string{"1234 tokens $0.0125", "/src/b", `"fix the failing test in pkg/foo and then`, "…\"", day.Add(time.Hour + time.Second).Local().Format("2006-01-02 15:04")} {
		if !strings.Contains(lines[0], want) {
			t.Fatalf("line %q lacks %q", lines[0], want)
		}
	}
	if !strings.Contains(lines[1], "  -  /src/a  \"hello\"") {
		t.Fatalf("a session without usage: %q", lines[1])
	}
	if !strings.Contains(stderr, "status unknown: temporal at 127.0.0.1:1") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("stderr %q", stderr)
	}

	code, out, _ = run(t, map[string]string{"DURABLE_AGENT_HOME": home}, "sessions", "--json")
	if code != ExitOK {
		t.Fatalf("sessions --json: exit %d", code)
	}
	var got []sessionSummary
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var s sessionSummary
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		got = append(got, s)
	}
	if len(got) != 2 || got[0].ID != "new" || got[0].Usage == nil || got[0].Usage.Output != 234 || got[0].Workspace != "/src/b" ||
		!got[0].LastActivity.Equal(day.Add(time.Hour+time.Second)) || len([]rune(got[0].LastPrompt)) != lastPromptRunes || got[1].Usage != nil {
		t.Fatalf("json: %+v", got)
	}

	// session list keeps printing bare ids.
	if code, out, _ := run(t, map[string]string{"DURABLE_AGENT_HOME": home}, "session", "list"); code != ExitOK || out != "new\nold\n" && out != "old\nnew\n" {
		t.Fatalf("session list: exit %d %q", code, out)
	}
}

// --continue picks the most recent session of the workspace; with none
// there it is a one-line error naming the directory, and it does not
// combine with --session.
func TestContinue_LatestSessionOfTheWorkspace(t *testing.T) {
	home := t.TempDir()
	day := time.Now().Add(48 * time.Hour)
	ws, other := t.TempDir(), t.TempDir()
	writeSession(t, home, "older", ws, "one", day, nil)
	writeSession(t, home, "newer", ws, "two", day.Add(time.Minute), nil)
	writeSession(t, home, "elsewhere", other, "three", day.Add(time.Hour), nil)
	c := newFlags("prompt", Env{})
	w := c.addWorkspaceFlags()
	if err := c.fs.Parse([]string{"-c", "--workspace", ws}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DURABLE_AGENT_HOME", home)
	s, _ := c.settings(Env{})
	if err := w.resolve(c, s); err != nil || c.session != "newer" {
		t.Fatalf("continue in %s: session %q, %v", ws, c.session, err)
	}

	empty := t.TempDir()
	for _, cmd := range []string{"prompt", "chat"} {
		args := []string{cmd, "--continue", "--workspace", empty}
		if cmd == "prompt" {
			args = append(args, "hi")
		}
		code, _, stderr := run(t, map[string]string{"DURABLE_AGENT_HOME": home}, args...)
		want := "starter " + cmd + ": --continue: no session in " + empty + " to continue"
		if code != ExitUsage || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
			t.Fatalf("%s: exit %d, stderr %q", cmd, code, stderr)
		}
	}
	code, _, stderr := run(t, map[string]string{"DURABLE_AGENT_HOME": home}, "prompt", "-c", "--session", "x", "--workspace", ws, "hi")
	if code != ExitUsage || !strings.Contains(stderr, "give --continue or --session, not both") {
		t.Fatalf("-c with --session: exit %d, %q", code, stderr)
	}
}

// A --worktree session works in its worktree, but the user started it in
// the repository: --continue there finds it (issue 25), and a plain
// session of the worktree's own directory is still found by that.
func TestContinue_FindsWorktreeSessionFromTheRepository(t *testing.T) {
	home := t.TempDir()
	day := time.Now().Add(48 * time.Hour)
	repo, wts := t.TempDir(), t.TempDir()
	st, err := session.Open(filepath.Join(home, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	wt := &session.Worktree{Dir: filepath.Join(wts, "job"), Branch: "agent/job", Base: "abc", Repo: repo}
	if _, err := st.InitHeader("job", session.Header{Cwd: filepath.Join(wt.Dir, "pkg"), Worktree: wt}); err != nil {
		t.Fatal(err)
	}
	um := agent.TextMessage(agent.RoleUser, "migrate pkg")
	if _, err := st.Append("job", session.Entry{Type: session.TypeMessage, ID: "ju", Timestamp: day, Message: &um}); err != nil {
		t.Fatal(err)
	}
	writeSession(t, home, "plain-older", filepath.Join(repo, "pkg"), "one", day.Add(-time.Hour), nil)
	t.Setenv("DURABLE_AGENT_HOME", home)
	for _, d := range []string{filepath.Join(repo, "pkg"), filepath.Join(wt.Dir, "pkg")} {
		if err := os.MkdirAll(d, 0o755); err != nil { // --workspace must exist (Temporal on loopback)
			t.Fatal(err)
		}
	}
	for dir, want := range map[string]string{filepath.Join(repo, "pkg"): "job", filepath.Join(wt.Dir, "pkg"): "job", repo: ""} {
		c := newFlags("prompt", Env{})
		w := c.addWorkspaceFlags()
		if err := c.fs.Parse([]string{"-c", "--workspace", dir}); err != nil {
			t.Fatal(err)
		}
		s, _ := c.settings(Env{})
		err := w.resolve(c, s)
		if want == "" {
			if err == nil {
				t.Errorf("continue in %s: session %q, want none (no session was started there)", dir, c.session)
			}
			continue
		}
		if err != nil || c.session != want {
			t.Errorf("continue in %s: session %q, %v; want %s", dir, c.session, err, want)
		}
	}
}

// A session file that cannot be read is listed as such; the others still
// are.
func TestSessions_UnreadableSessionDoesNotHideTheOthers(t *testing.T) {
	home := t.TempDir()
	writeSession(t, home, "good", "/src/a", "hello", time.Now(), nil)
	if err := os.WriteFile(filepath.Join(home, "sessions", "bad.jsonl"), []byte("not a header\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := run(t, map[string]string{"DURABLE_AGENT_HOME": home}, "sessions")
	if code != ExitOK || !strings.Contains(out, "good  unknown  ") || !strings.Contains(out, "bad  unknown  ") || !strings.Contains(out, "(unreadable: ") {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
}

// Spec 17.2: a sub-agent's session names its parent, in the line's status
// and as parentSession in --json; a session a person started names none.
func TestSessions_SubAgentSessionNamesItsParent(t *testing.T) {
	home := t.TempDir()
	st, err := session.Open(filepath.Join(home, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.InitHeader("parent.task-1", session.Header{Cwd: "/src/a", ParentSession: "parent"}); err != nil {
		t.Fatal(err)
	}
	writeSession(t, home, "parent", "/src/a", "split the work", time.Now(), nil)

	code, out, stderr := run(t, map[string]string{"DURABLE_AGENT_HOME": home}, "sessions")
	if code != ExitOK {
		t.Fatalf("sessions: exit %d\n%s%s", code, out, stderr)
	}
	var child, parent string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "parent.task-1  "):
			child = l
		case strings.HasPrefix(l, "parent  "):
			parent = l
		}
	}
	if !strings.HasPrefix(child, "parent.task-1  unknown (sub-agent of parent)  ") || parent == "" || strings.Contains(parent, "sub-agent") {
		t.Fatalf("want the child's line to name its parent and the parent's none:\n%s", out)
	}

	code, out, _ = run(t, map[string]string{"DURABLE_AGENT_HOME": home}, "sessions", "--json")
	if code != ExitOK {
		t.Fatalf("sessions --json: exit %d", code)
	}
	parents := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var s sessionSummary
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		parents[s.ID] = s.ParentSession
	}
	if len(parents) != 2 || parents["parent.task-1"] != "parent" || parents["parent"] != "" {
		t.Fatalf("json parentSession: %v", parents)
	}
}
