package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func gitT(t *testing.T, dir string, args ...string) {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// A linked git worktree as workspace (starter prompt --worktree): git in
// the sandbox commits on its branch, which needs the repository's git
// directory; the repository's own checkout stays invisible.
func TestSandbox_GitCommitsInALinkedWorktree(t *testing.T) {
	r := runner(t, Config{})
	repo := t.TempDir()
	gitT(t, repo, "init", "--quiet", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("base\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitT(t, repo, "add", "a.txt")
	gitT(t, repo, "commit", "--quiet", "-m", "base")
	wt := filepath.Join(t.TempDir(), "wt")
	gitT(t, repo, "worktree", "add", "--quiet", "-b", "agent/s", wt)
	if got, _ := filepath.EvalSymlinks(filepath.Join(repo, ".git")); worktreeGitDir(wt) != got {
		t.Fatalf("worktreeGitDir = %q, want %q", worktreeGitDir(wt), got)
	}
	if worktreeGitDir(repo) != "" || worktreeGitDir(t.TempDir()) != "" {
		t.Fatal("a main checkout or a plain directory has no git dir to bind")
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
}
