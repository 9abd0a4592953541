package activities

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/llm/scripted"
)

func testRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "--quiet"}, {"add", "a.txt"}, {"commit", "--quiet", "-m", "base"}} {
		out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// BeginPrompt gives a new session asking for a worktree one at
// <WorktreeDir>/<session>, records it in the header and works there; a
// re-run finds it; an existing session without one refuses
// WorktreeRequired and keeps its workspace under WorktreeNew; a workspace
// outside git, outside tools.allowedRoots or a worker without a worktree
// directory fail in one line naming the problem.
func TestBeginPrompt_Worktree(t *testing.T) {
	f := newFixture(t, scripted.New(scripted.Options{}))
	f.acts.WorktreeDir = filepath.Join(t.TempDir(), "worktrees")
	f.env.RegisterActivityWithOptions(f.acts.BeginPrompt, activityName(BeginPromptName))
	begin := func(in BeginPromptInput) (BeginPromptResult, error) {
		v, err := f.env.ExecuteActivity(BeginPromptName, in)
		var res BeginPromptResult
		if err == nil {
			err = v.Get(&res)
		}
		return res, err
	}
	repo := testRepo(t)
	want := filepath.Join(f.acts.WorktreeDir, "job")
	for i := 0; i < 2; i++ { // the second is a re-run
		res, err := begin(BeginPromptInput{SessionID: "job", Workspace: repo, Worktree: WorktreeRequired, NeedWorkspace: true})
		if err != nil || res.Workspace != want {
			t.Fatalf("run %d: %+v, %v; want workspace %s", i+1, res, err, want)
		}
	}
	sess, err := f.store.Load("job")
	if err != nil {
		t.Fatal(err)
	}
	wt := sess.Header.Worktree
	if wt == nil || wt.Branch != "agent/job" || wt.Dir != want || len(wt.Base) != 40 || sess.Header.Cwd != want {
		t.Fatalf("header = %+v, worktree %+v", sess.Header, wt)
	}
	if b, err := os.ReadFile(filepath.Join(want, "a.txt")); err != nil || string(b) != "base\n" {
		t.Fatalf("worktree checkout: %q %v", b, err)
	}

	// s1 exists (the fixture's) without a worktree.
	if _, err := begin(BeginPromptInput{SessionID: "s1", Workspace: repo, Worktree: WorktreeRequired}); err == nil ||
		!strings.Contains(err.Error(), "session s1 exists without a worktree") {
		t.Fatalf("required on an existing session: %v", err)
	}
	if _, err := begin(BeginPromptInput{SessionID: "s1", Workspace: repo, Worktree: WorktreeNew}); err != nil {
		t.Fatalf("the setting on an existing session: %v", err)
	}

	plain := t.TempDir()
	if _, err := begin(BeginPromptInput{SessionID: "plain", Workspace: plain, Worktree: WorktreeNew}); err == nil ||
		!strings.Contains(err.Error(), "workspace "+plain+": not a git repository") {
		t.Fatalf("not a repository: %v", err)
	}
	f.acts.ToolPolicy.AllowedRoots = []string{plain}
	if _, err := begin(BeginPromptInput{SessionID: "outside", Workspace: repo, Worktree: WorktreeNew}); err == nil ||
		!strings.Contains(err.Error(), "outside tools.allowedRoots") {
		t.Fatalf("repository outside the allowed roots: %v", err)
	}
	f.acts.ToolPolicy.AllowedRoots = nil
	f.acts.WorktreeDir = ""
	if _, err := begin(BeginPromptInput{SessionID: "nodir", Workspace: repo, Worktree: WorktreeNew}); err == nil ||
		!strings.Contains(err.Error(), "keeps no worktrees") {
		t.Fatalf("worker without a worktree directory: %v", err)
	}
}
