package integration

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/workflows"
)

// worktreeFixture is the history of a --worktree session's prompt (a tool
// call, a commit, the branch summary at its end); workflows/replay_test.go
// replays it. Regenerate with UPDATE_REPLAY_HISTORY=1 go test -run
// TestIntegration_WorktreePerSession ./test/integration
var worktreeFixture = filepath.Join("..", "..", "workflows", "testdata", "prompt_worktree_history.json")

// gitRepo makes a repository with one commit of a.txt ("base").
func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "--quiet", "-b", "main"}, {"add", "a.txt"}, {"commit", "--quiet", "-m", "base"}} {
		if args[0] == "add" {
			if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("base\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		gitIn(t, dir, args...)
	}
	return dir
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Issue 25 "A git branch per job": two --worktree sessions of one
// repository run at once and edit the same file through the model's tool
// calls, each in its own worktree on its own branch; the main checkout is
// untouched; each prompt's output names its branch and its commits or
// uncommitted change; starter diff prints each job's change; starter
// sessions shows the branches; --worktree on an existing session without
// one and on a directory outside git are one-line errors with exit 2;
// session delete removes the worktree and its branch, refusing without
// --force when that loses work.
// Spec: "A git branch per job".
func TestIntegration_WorktreePerSession(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	repo := gitRepo(t)
	base := gitIn(t, repo, "rev-parse", "HEAD")

	jobs := map[string]string{
		// wa commits its change, wb leaves it uncommitted.
		"wa": `tool:bash {"command":"echo from-a > a.txt && git -c user.name=agent -c user.email=agent@example.com commit -qam 'edit by a'"}`,
		"wb": `tool:bash {"command":"echo from-b > a.txt"}`,
	}
	type outcome struct {
		code        int
		out, stderr string
	}
	got := map[string]outcome{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for id, call := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, out, stderr := e.starter("prompt", "--session", id, "--worktree", "--workspace", repo,
				"--fault", call, "--fault", "text:edited", "edit a.txt")
			mu.Lock()
			got[id] = outcome{code, out, stderr}
			mu.Unlock()
		}()
	}
	wg.Wait()
	for id, o := range got {
		if o.code != cli.ExitOK {
			t.Fatalf("prompt %s: exit %d\nstdout %s\nstderr %s", id, o.code, o.out, o.stderr)
		}
	}
	if want := "branch agent/wa: 1 commit since " + base[:7]; !strings.Contains(got["wa"].out, want) || !strings.Contains(got["wa"].out, "edit by a") {
		t.Fatalf("wa's output lacks %q and its commit:\n%s", want, got["wa"].out)
	}
	if want := "branch agent/wb: no commits since " + base[:7] + ", uncommitted changes in 1 file"; !strings.Contains(got["wb"].out, want) {
		t.Fatalf("wb's output lacks %q:\n%s", want, got["wb"].out)
	}

	// The same, on the prompt's prompt_end event (what chat, RPC and the
	// TUI read) and in its history, which replays (one fixture of the
	// shape).
	evs := e.events("wa")
	end := evs[len(evs)-1]
	if end.Type != agent.EventPromptEnd || end.Worktree == nil || end.Worktree.Branch != "agent/wa" || end.Worktree.Commits != 1 ||
		len(end.Worktree.Recent) != 1 || !strings.HasSuffix(end.Worktree.Recent[0], " edit by a") || end.Worktree.Base != base {
		t.Fatalf("wa's last event %+v, want prompt_end with its branch's one commit", end)
	}
	exportAndReplay(t, e, workflows.WorkflowID("wa"), "", worktreeFixture)

	// Each branch has its own change; the main checkout has neither.
	wtA, wtB := filepath.Join(e.dataDir, "worktrees", "wa"), filepath.Join(e.dataDir, "worktrees", "wb")
	for path, want := range map[string]string{
		filepath.Join(repo, "a.txt"): "base\n", filepath.Join(wtA, "a.txt"): "from-a\n", filepath.Join(wtB, "a.txt"): "from-b\n",
	} {
		if b, err := os.ReadFile(path); err != nil || string(b) != want {
			t.Fatalf("%s = %q, %v; want %q", path, b, err, want)
		}
	}
	if got := gitIn(t, repo, "show", "agent/wa:a.txt"); got != "from-a" {
		t.Fatalf("branch agent/wa holds a.txt %q", got)
	}
	if st := gitIn(t, repo, "status", "--porcelain"); st != "" {
		t.Fatalf("main checkout changed: %q", st)
	}

	for id, want := range map[string]string{"wa": "+from-a", "wb": "+from-b"} {
		code, out, stderr := e.starter("diff", "--session", id)
		if code != cli.ExitOK || !strings.Contains(out, "-base") || !strings.Contains(out, want) {
			t.Fatalf("diff %s: exit %d\nstdout %s\nstderr %s", id, code, out, stderr)
		}
	}
	code, out, stderr := e.starter("sessions")
	if code != cli.ExitOK || !strings.Contains(out, wtA+" [agent/wa]") || !strings.Contains(out, wtB+" [agent/wb]") {
		t.Fatalf("sessions: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}

	// Bad uses, each one line with exit 2.
	plain := t.TempDir()
	if code, _, stderr := e.starter("prompt", "--session", "plain", "--worktree", "--workspace", plain, "hi"); code != cli.ExitUsage ||
		!strings.Contains(stderr, plain+" is not in a git repository") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("--worktree outside git: exit %d, stderr %q", code, stderr)
	}
	if code, out, _ := e.starter("prompt", "--session", "chat", "--workspace", repo, "hi"); code != cli.ExitOK {
		t.Fatalf("plain session: exit %d\n%s", code, out)
	}
	if code, _, stderr := e.starter("prompt", "--session", "chat", "--workspace", repo, "--worktree", "hi again"); code != cli.ExitUsage || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, "session chat exists without a worktree") {
		t.Fatalf("--worktree on an existing session: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := e.starter("diff", "--session", "chat"); code != cli.ExitUsage || !strings.Contains(stderr, "session chat has no worktree") {
		t.Fatalf("diff without a worktree: exit %d, stderr %q", code, stderr)
	}

	// Delete (issue 37, 9): wa's branch has a commit no other branch has,
	// wb's worktree an uncommitted change; each is refused in one line
	// saying so, until --force, whose output says how to bring wa's
	// branch back.
	tipA := gitIn(t, repo, "rev-parse", "agent/wa")
	for id, want := range map[string]string{"wa": "1 commit on branch agent/wa that no other branch has", "wb": "uncommitted changes in 1 file"} {
		code, _, stderr := e.starter("session", "delete", "--session", id)
		if code == cli.ExitOK || !strings.Contains(stderr, want) || !strings.Contains(stderr, "--force") || strings.Count(stderr, "\n") != 1 {
			t.Fatalf("delete %s without --force: exit %d, stderr %q", id, code, stderr)
		}
	}
	for id, want := range map[string]string{"wa": "git -C " + repo + " branch agent/wa " + tipA + " brings it back", "wb": "removed its worktree " + wtB + " and branch agent/wb"} {
		code, out, stderr := e.starter("session", "delete", "--session", id, "--force")
		if code != cli.ExitOK || !strings.Contains(out, want) {
			t.Fatalf("delete %s --force: exit %d\nstdout %s\nstderr %s", id, code, out, stderr)
		}
	}
	for _, dir := range []string{wtA, wtB} {
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("worktree %s after delete: %v", dir, err)
		}
	}
	if branches := gitIn(t, repo, "branch", "--list", "agent/*"); branches != "" {
		t.Fatalf("branches after delete: %q, want none", branches)
	}
	gitIn(t, repo, "branch", "agent/wa", tipA)
	if got := gitIn(t, repo, "show", "agent/wa:a.txt"); got != "from-a" {
		t.Fatalf("branch agent/wa brought back holds a.txt %q", got)
	}
}
