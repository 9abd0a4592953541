package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// worktreeGitDir is the git directory a workspace that is a linked git
// worktree (its .git a file "gitdir: <repo>/.git/worktrees/<name>", as
// starter prompt --worktree makes) needs besides itself: the
// repository's common git directory, which holds its objects, refs and
// the worktree's own index and HEAD. Bound read-write, it lets git in the
// sandbox read and commit on the worktree's branch. "" for any other
// workspace (a .git directory is inside the workspace already).
func worktreeGitDir(workspace string) string {
	dotgit := filepath.Join(workspace, ".git")
	fi, err := os.Lstat(dotgit)
	if err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return ""
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || gitdir == "" {
		return ""
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(workspace, gitdir)
	}
	common := gitdir
	if c, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		if p := strings.TrimSpace(string(c)); filepath.IsAbs(p) {
			common = p
		} else {
			common = filepath.Join(gitdir, p)
		}
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(common))
	if err != nil || real == "/" {
		return ""
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return ""
	}
	return real
}
