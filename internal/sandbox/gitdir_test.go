package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/worktree"
)

func gitT(t *testing.T, dir string, args ...string) {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// A worktree the worker made (starter prompt --worktree) as workspace:
// git in the sandbox commits on its branch, which needs the repository's
// git directory, bound from the worker's record; the repository's own
// checkout stays invisible. A .git file rewritten to name another
// directory changes nothing, and a workspace that is no worktree of the
// worker's gets no git directory whatever its .git says.
func TestSandbox_GitCommitsInALinkedWorktree(t *testing.T) {
	worktrees := filepath.Join(t.TempDir(), "worktrees")
	c := Config{Worktrees: worktrees}
	r := runner(t, c)
	repo := t.TempDir()
	gitT(t, repo, "init", "--quiet", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, repo, "add", "a.txt")
	gitT(t, repo, "commit", "--quiet", "-m", "base")
	wt := filepath.Join(worktrees, "s")
	if _, err := (worktree.Git{Runner: r}).Create(context.Background(), repo, wt, "agent/s"); err != nil {
		t.Fatal(err)
	}
	if got, _ := filepath.EvalSymlinks(filepath.Join(repo, ".git")); c.worktreeGitDir(wt) != got {
		t.Fatalf("worktreeGitDir = %q, want %q", c.worktreeGitDir(wt), got)
	}
	res := bash(t, r, wt, "echo changed > a.txt && git -c user.name=a -c user.email=a@example.com commit -qam change && git log --format=%s -1", 0)
	if res.IsError || !strings.Contains(res.Content, "change") {
		t.Fatalf("commit in the sandbox: %+v", res)
	}
	out, err := exec.Command("git", "-C", repo, "log", "--format=%s", "-1", "agent/s").Output()
	if err != nil || strings.TrimSpace(string(out)) != "change" {
		t.Fatalf("branch agent/s after the sandboxed commit: %q %v", out, err)
	}
	if res := bash(t, r, wt, "ls "+filepath.Join(repo, "a.txt"), 0); !res.IsError {
		t.Fatalf("the repository's checkout is visible in the sandbox: %s", res.Content)
	}

	plain := t.TempDir()
	for _, ws := range []string{wt, plain} {
		if err := os.WriteFile(filepath.Join(ws, ".git"), []byte("gitdir: /etc\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		planted := filepath.Join("/etc", "planted-"+filepath.Base(t.TempDir()))
		res := bash(t, r, ws, "cat /etc/shadow >/dev/null 2>&1 && echo SHADOW-READ; touch "+planted+" 2>/dev/null; true", 0)
		if _, err := os.Stat(planted); err == nil || strings.Contains(res.Content, "SHADOW-READ") {
			os.Remove(planted)
			t.Fatalf("workspace %s with .git naming /etc: %s (host's %s: %v)", ws, res.Content, planted, err)
		}
	}
	if c.worktreeGitDir(plain) != "" || (Config{}).worktreeGitDir(wt) != "" {
		t.Fatal("a directory that is no worktree of the worker's has no git dir to bind")
	}
	// A record that names a path through a symbolic link (a .git swapped
	// for a link), or the root, binds nothing.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink("/etc", link); err != nil {
		t.Fatal(err)
	}
	for _, rec := range []string{link, "/"} {
		if err := os.WriteFile(worktree.GitDirRecord(wt), []byte(rec+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if gd := c.worktreeGitDir(wt); gd != "" {
			t.Fatalf("record %s: worktreeGitDir = %q, want none", rec, gd)
		}
	}
}
