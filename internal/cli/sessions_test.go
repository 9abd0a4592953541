package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/activities"
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
	if _, err := st.Init(id, session.Header{Cwd: cwd}); err != nil {
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

// lines reads the sessions of the JSONL store under home as the workers
// do for a starter (activities.ReadSession) and returns their lines,
// newest first, each with status; the reads through Temporal are
// TestIntegration_SessionsAndContinue's and the cluster's
// TestCluster_StarterWithOnlyTheTemporalAddress's.
func lines(t *testing.T, home, status string) []sessionSummary {
	t.Helper()
	st, err := session.Open(filepath.Join(home, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&activities.Activities{Sessions: st}).ReadSession(context.Background(), activities.ReadSessionInput{})
	if err != nil {
		t.Fatal(err)
	}
	sums := sessionLines(res.Summaries)
	for i := range sums {
		sums[i].Status = status
	}
	return sums
}

// printed is `starter sessions`' output of sums, and its --json output.
func printed(t *testing.T, sums []sessionSummary) (string, string) {
	t.Helper()
	var out, js bytes.Buffer
	printSessions(&out, sums, time.Now())
	for _, sum := range sums {
		_ = json.NewEncoder(&js).Encode(sum)
	}
	return out.String(), js.String()
}

// `starter sessions` lists every session newest first with its workspace,
// its last prompt on one bounded line, its last activity and its usage;
// with each session's status.
func TestSessions_NewestFirstWithWorkspacePromptAndUsage(t *testing.T) {
	home := t.TempDir()
	// After the files' creation (their header's time): another day.
	day := time.Now().Add(48 * time.Hour).Truncate(time.Second)
	long := "fix the failing test\nin pkg/foo " + strings.Repeat("and then some more ", 10)
	writeSession(t, home, "old", "/src/a", "hello", day, nil)
	writeSession(t, home, "new", "/src/b", long, day.Add(time.Hour),
		&agent.Usage{Input: 1000, Output: 234, Cost: agent.UsageCost{Total: 0.0125}})

	out, js := printed(t, lines(t, home, "idle"))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "new  idle  ") || !strings.HasPrefix(lines[1], "old  idle  ") {
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
	var got []sessionSummary
	for _, l := range strings.Split(strings.TrimSpace(js), "\n") {
		var s sessionSummary
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		got = append(got, s)
	}
	if len(got) != 2 || got[0].ID != "new" || got[0].Usage == nil || got[0].Usage.Output != 234 || got[0].Workspace != "/src/b" ||
		!got[0].LastActivity.Equal(day.Add(time.Hour+time.Second)) || len([]rune(got[0].LastPrompt)) != session.SummaryPromptRunes || got[1].Usage != nil {
		t.Fatalf("json: %+v", got)
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
	if got := latestIn(lines(t, home, ""), ws); got != "newer" {
		t.Fatalf("continue in %s: session %q", ws, got)
	}
	if got := latestIn(lines(t, home, ""), t.TempDir()); got != "" {
		t.Fatalf("continue in an empty directory: session %q", got)
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
	if _, err := st.Init("job", session.Header{Cwd: filepath.Join(wt.Dir, "pkg"), Worktree: wt}); err != nil {
		t.Fatal(err)
	}
	um := agent.TextMessage(agent.RoleUser, "migrate pkg")
	if _, err := st.Append("job", session.Entry{Type: session.TypeMessage, ID: "ju", Timestamp: day, Message: &um}); err != nil {
		t.Fatal(err)
	}
	writeSession(t, home, "plain-older", filepath.Join(repo, "pkg"), "one", day.Add(-time.Hour), nil)
	for dir, want := range map[string]string{filepath.Join(repo, "pkg"): "job", filepath.Join(wt.Dir, "pkg"): "job", repo: ""} {
		if got := latestIn(lines(t, home, ""), dir); got != want {
			t.Errorf("continue in %s: session %q; want %q", dir, got, want)
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
	out, _ := printed(t, lines(t, home, "idle"))
	if !strings.Contains(out, "good  idle  ") || !strings.Contains(out, "bad  idle  ") || !strings.Contains(out, "(unreadable: ") {
		t.Fatalf("sessions:\n%s", out)
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
	if _, err := st.Init("parent.task-1", session.Header{Cwd: "/src/a", ParentSession: "parent"}); err != nil {
		t.Fatal(err)
	}
	writeSession(t, home, "parent", "/src/a", "split the work", time.Now(), nil)

	out, js := printed(t, lines(t, home, "idle"))
	var child, parent string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "parent.task-1  "):
			child = l
		case strings.HasPrefix(l, "parent  "):
			parent = l
		}
	}
	if !strings.HasPrefix(child, "parent.task-1  idle (sub-agent of parent)  ") || parent == "" || strings.Contains(parent, "sub-agent") {
		t.Fatalf("want the child's line to name its parent and the parent's none:\n%s", out)
	}

	parents := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(js), "\n") {
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
