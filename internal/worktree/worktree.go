// Package worktree gives an agent session a git worktree of its own: a
// checkout of the workspace's repository on a new branch agent/<session>,
// so that parallel jobs never edit the same checkout (starter prompt
// --worktree).
//
// The contract:
//   - Create makes the worktree at a directory the caller chooses (the
//     worker's <dataDir>/worktrees/<session>) on a new branch from the
//     repository's HEAD, and is idempotent: a re-run finds the worktree it
//     made and describes it again.
//   - A workspace that is not inside a git repository is ErrNotRepo, whose
//     message names the directory.
//   - Diff is the job's change against its base: commits on the branch,
//     staged, unstaged and untracked (not ignored) files alike. It never
//     changes the worktree or its index.
//   - Remove removes the worktree and deletes the branch when it holds no
//     commit beyond the base; a branch with commits is kept (the work is
//     the user's), and Remove says so.
//
// Every operation runs the git command line; nothing here is workflow code.
package worktree

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// BranchPrefix starts the branch of every session's worktree.
const BranchPrefix = "agent/"

// Branch is the branch of a session's worktree: agent/<session>.
func Branch(sessionID string) string { return BranchPrefix + sessionID }

// ErrNotRepo is returned (wrapped, naming the directory) by Create for a
// workspace that is not inside a git repository.
var ErrNotRepo = errors.New("not a git repository")

// Info describes a session's worktree.
type Info struct {
	// Dir is the worktree's top directory.
	Dir string `json:"dir"`
	// Workspace is where the session works: Dir, or the directory inside
	// it that matches a workspace below the repository's top.
	Workspace string `json:"workspace"`
	// Branch is the worktree's branch (agent/<session>).
	Branch string `json:"branch"`
	// Base is the commit the branch was made from (full hash).
	Base string `json:"base"`
	// Repo is the top directory of the repository it was made from.
	Repo string `json:"repo"`
}

// Create makes a worktree of the repository holding workspace at dir on a
// new branch made from the repository's HEAD. If dir already is that
// worktree (a re-run), Create describes it. A branch of that name that
// exists without the worktree is an error: it may hold someone's work.
func Create(ctx context.Context, workspace, dir, branch string) (Info, error) {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return Info{}, fmt.Errorf("worktree of %s: %w", workspace, err)
	}
	if fi, err := os.Stat(ws); err != nil {
		return Info{}, fmt.Errorf("worktree of %s: %w", ws, errors.Unwrap(err))
	} else if !fi.IsDir() {
		return Info{}, fmt.Errorf("worktree of %s: not a directory", ws)
	}
	top, err := git(ctx, ws, "rev-parse", "--show-toplevel")
	if err != nil {
		return Info{}, fmt.Errorf("workspace %s: %w: --worktree needs a workspace inside a git repository", ws, ErrNotRepo)
	}
	// The workspace below the top, resolved like git resolves it.
	realWS, err := filepath.EvalSymlinks(ws)
	if err != nil {
		realWS = ws
	}
	rel, err := filepath.Rel(top, realWS)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = "."
	}
	info := Info{Dir: dir, Workspace: filepath.Join(dir, rel), Branch: branch, Repo: top}
	if _, err := os.Stat(dir); err == nil {
		head, err := git(ctx, dir, "rev-parse", "--abbrev-ref", "HEAD")
		if err != nil || head != branch {
			return Info{}, fmt.Errorf("worktree %s exists and is not on branch %s", dir, branch)
		}
		// A re-run: nothing ran in the worktree yet, so the branch's
		// commit is the base.
		if info.Base, err = git(ctx, dir, "rev-parse", "--verify", branch+"^{commit}"); err != nil {
			return Info{}, fmt.Errorf("worktree %s: %w", dir, err)
		}
		return info, nil
	}
	if info.Base, err = git(ctx, top, "rev-parse", "--verify", "HEAD^{commit}"); err != nil {
		return Info{}, fmt.Errorf("repository %s has no commit to branch from: commit something first", top)
	}
	if _, err := git(ctx, top, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		return Info{}, fmt.Errorf("branch %s already exists in %s: delete it (git branch -D %s) or use another session id", branch, top, branch)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return Info{}, fmt.Errorf("worktree %s: %w", dir, err)
	}
	if _, err := git(ctx, top, "worktree", "add", "--quiet", "-b", branch, dir, info.Base); err != nil {
		return Info{}, fmt.Errorf("create worktree %s of %s: %w", dir, top, err)
	}
	return info, nil
}

// Diff returns the worktree's change against base: what `git diff base`
// shows plus untracked files that are not ignored. It reads the worktree
// through a temporary index, so the worktree's own index is untouched.
func Diff(ctx context.Context, dir, base string) (string, error) {
	idx, err := os.CreateTemp("", "durable-agent-index-*")
	if err != nil {
		return "", fmt.Errorf("diff of %s: %w", dir, err)
	}
	idx.Close()
	// git wants a missing or valid index file, not an empty one.
	os.Remove(idx.Name())
	defer os.Remove(idx.Name())
	env := []string{"GIT_INDEX_FILE=" + idx.Name()}
	if _, err := gitEnv(ctx, dir, env, "add", "--all", "."); err != nil {
		return "", fmt.Errorf("diff of %s: %w", dir, err)
	}
	out, err := gitEnv(ctx, dir, env, "diff", "--cached", "--no-color", "--no-ext-diff", "--no-textconv", base)
	if err != nil {
		return "", fmt.Errorf("diff of %s against %s: %w", dir, short(base), err)
	}
	return out, nil
}

// Summary is where a worktree's branch stands against its base.
type Summary struct {
	Branch string `json:"branch"`
	Base   string `json:"base"`
	// Commits are the branch's commits since the base, newest first, as
	// "<short hash> <subject>".
	Commits []string `json:"commits,omitempty"`
	// Uncommitted counts the changed and untracked files not committed.
	Uncommitted int `json:"uncommitted,omitempty"`
	// Files are the paths that differ from the base, committed or not,
	// untracked ones included, relative to the worktree, sorted.
	Files []string `json:"files,omitempty"`
}

// Summarize describes the branch of the worktree at dir against base.
func Summarize(ctx context.Context, dir, branch, base string) (Summary, error) {
	s := Summary{Branch: branch, Base: base}
	log, err := git(ctx, dir, "log", "--format=%h %s", base+"..HEAD")
	if err != nil {
		return s, fmt.Errorf("commits of %s since %s: %w", dir, short(base), err)
	}
	if log != "" {
		s.Commits = strings.Split(log, "\n")
	}
	status, err := git(ctx, dir, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return s, fmt.Errorf("status of %s: %w", dir, err)
	}
	if status != "" {
		s.Uncommitted = len(strings.Split(status, "\n"))
	}
	changed, err := git(ctx, dir, "diff", "--no-ext-diff", "--name-only", "--no-renames", "-z", base)
	if err != nil {
		return s, fmt.Errorf("files of %s changed since %s: %w", dir, short(base), err)
	}
	untracked, err := git(ctx, dir, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return s, fmt.Errorf("untracked files of %s: %w", dir, err)
	}
	for _, f := range strings.Split(changed+"\x00"+untracked, "\x00") {
		if f != "" {
			s.Files = append(s.Files, f)
		}
	}
	slices.Sort(s.Files)
	s.Files = slices.Compact(s.Files)
	return s, nil
}

// String is the summary on one line, e.g. "branch agent/s1: 2 commits
// since 1a2b3c4 (9f8e7d6 fix parser; …), uncommitted changes in 1 file".
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "branch %s: ", s.Branch)
	switch len(s.Commits) {
	case 0:
		fmt.Fprintf(&b, "no commits since %s", short(s.Base))
	case 1:
		fmt.Fprintf(&b, "1 commit since %s (%s)", short(s.Base), s.Commits[0])
	default:
		fmt.Fprintf(&b, "%d commits since %s (%s; …)", len(s.Commits), short(s.Base), s.Commits[0])
	}
	switch s.Uncommitted {
	case 0:
		if len(s.Commits) == 0 {
			b.WriteString(", no changes")
		}
	case 1:
		b.WriteString(", uncommitted changes in 1 file")
	default:
		fmt.Fprintf(&b, ", uncommitted changes in %d files", s.Uncommitted)
	}
	return b.String()
}

// Removed says what Remove did.
type Removed struct {
	// BranchKept is set when the branch holds commits beyond the base and
	// was left in the repository.
	BranchKept bool `json:"branchKept,omitempty"`
	// Commits counts the branch's commits beyond the base.
	Commits int `json:"commits,omitempty"`
}

// Remove removes the worktree at dir (uncommitted changes with it) and
// deletes its branch from repo when the branch has no commit beyond base.
// A worktree or branch already gone is not an error, so a retry finishes
// the job; a repository gone leaves only the directory to remove.
func Remove(ctx context.Context, repo, dir, branch, base string) (Removed, error) {
	if _, err := os.Stat(repo); errors.Is(err, fs.ErrNotExist) {
		if err := os.RemoveAll(dir); err != nil {
			return Removed{}, fmt.Errorf("remove worktree %s: %w", dir, err)
		}
		return Removed{}, nil
	}
	if _, err := os.Stat(dir); err == nil {
		if _, err := git(ctx, repo, "worktree", "remove", "--force", "--force", dir); err != nil {
			return Removed{}, fmt.Errorf("remove worktree %s: %w", dir, err)
		}
	} else if _, err := git(ctx, repo, "worktree", "prune"); err != nil {
		return Removed{}, fmt.Errorf("prune worktrees of %s: %w", repo, err)
	}
	if _, err := git(ctx, repo, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err != nil {
		return Removed{}, nil // already deleted
	}
	count, err := git(ctx, repo, "rev-list", "--count", base+".."+"refs/heads/"+branch)
	if err != nil {
		return Removed{}, fmt.Errorf("commits of %s: %w", branch, err)
	}
	n, _ := strconv.Atoi(count)
	if n > 0 {
		return Removed{BranchKept: true, Commits: n}, nil
	}
	if _, err := git(ctx, repo, "branch", "-D", branch); err != nil {
		return Removed{}, fmt.Errorf("delete branch %s: %w", branch, err)
	}
	return Removed{}, nil
}

func short(hash string) string {
	if len(hash) > 7 {
		return hash[:7]
	}
	return hash
}

func git(ctx context.Context, dir string, args ...string) (string, error) {
	return gitEnv(ctx, dir, nil, args...)
}

// gitEnv runs git in dir and returns its output trimmed; a failure's
// error is git's own first line.
//
// git runs here as the worker, outside the sandbox, on a repository whose
// .git the agent can write from inside it: the repository's hooks and
// fsmonitor command are switched off, and git gets only PATH, HOME and
// TMPDIR of the worker's environment, never its keys. (A clean or smudge
// filter named by the repository's own attributes and config still runs;
// docs/security.md says so.)
func gitEnv(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	safe := []string{"-C", dir, "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"}
	cmd := exec.CommandContext(ctx, "git", append(safe, args...)...)
	cmd.Env = append([]string{"GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}, env...)
	for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", args[0], msg)
	}
	return strings.TrimRight(out.String(), "\n"), nil
}

// InRepo reports whether dir is inside a git work tree.
func InRepo(dir string) bool {
	out, err := git(context.Background(), dir, "rev-parse", "--is-inside-work-tree")
	return err == nil && out == "true"
}
