package sandbox

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/durableagent/durableagent/internal/worktree"
)

// worktreeGitDir is the git directory a workspace in one of the worker's
// worktrees (starter prompt --worktree: <Worktrees>/<session>) needs
// besides itself: the repository's common git directory, which holds its
// objects, refs and the worktree's own index and HEAD. Bound read-write,
// it lets git in the sandbox commit on the worktree's branch. It is read
// from the record the worker wrote when it made the worktree
// (worktree.GitDirRecord, beside the worktree, out of the sandbox's
// reach), never from the workspace's .git file, which a command can
// rewrite to name any directory. "" for any other workspace, and for a
// record that names a path through a symbolic link (a component swapped
// by someone who can write the repository) or no directory.
func (c Config) worktreeGitDir(workspace string) string {
	if c.Worktrees == "" {
		return ""
	}
	root, err := filepath.EvalSymlinks(c.Worktrees)
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(root, workspace)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	name, _, _ := strings.Cut(rel, string(filepath.Separator))
	b, err := os.ReadFile(worktree.GitDirRecord(filepath.Join(root, name)))
	if err != nil {
		return ""
	}
	gd := strings.TrimSpace(string(b))
	if !filepath.IsAbs(gd) || filepath.Clean(gd) == "/" {
		return ""
	}
	if real, err := filepath.EvalSymlinks(gd); err != nil || real != filepath.Clean(gd) {
		return ""
	}
	if fi, err := os.Stat(gd); err != nil || !fi.IsDir() {
		return ""
	}
	return filepath.Clean(gd)
}
