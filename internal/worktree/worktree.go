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
//   - Remove removes the worktree and deletes its branch; without force it
//     refuses when that would lose work (uncommitted changes, commits no
//     other branch has) and says how to keep it.
//   - No git run here executes the repository's configuration outside the
//     sandbox (Git, hostGit).
//
// Every operation runs the git command line; nothing here is workflow code.
package worktree

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/tools"
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

// Git runs the git commands of sessions' worktrees for the worker and
// the starter (docs/security.md, "Git and worktrees"). The repository's
// configuration is the model's, so the commands that read or write the
// worktree's files, where filters and drivers run (Create's checkout,
// Diff, Summarize, Remove's check for unsaved work), run through Runner,
// the runner of the session's bash calls; the others read refs and
// objects only and run on the host, through hostGit.
type Git struct {
	// Runner runs the worktree's git (nil: tools.Local, as bash without
	// a sandbox); Env is the environment it gets (the bash tool's).
	Runner tools.Runner
	Env    []string
}

// GitDirRecord is where Create records the repository's git directory
// that the worktree at dir needs besides itself: beside dir, never in
// it, so nothing run in the worktree can change it. The sandbox binds
// that directory, and only it, into the worktree's sandboxes.
func GitDirRecord(dir string) string { return dir + ".gitdir" }

// CheckBranch refuses a session id that git would refuse in a branch
// name agent/<id> (git check-ref-format --branch), in one line. Session
// ids are letters, digits, '.', '_' and '-' (session.ValidateID), so
// what remains of git's rules is: no "..", no component starting with
// '.', no name ending with '.' or ".lock".
func CheckBranch(sessionID string) error {
	if strings.Contains(sessionID, "..") || strings.HasPrefix(sessionID, ".") || strings.HasSuffix(sessionID, ".") || strings.HasSuffix(sessionID, ".lock") {
		return fmt.Errorf(`session id %q cannot name a git branch (%s%s): git refuses "..", a leading or trailing "." and a trailing ".lock"; choose another session id for --worktree`,
			sessionID, BranchPrefix, sessionID)
	}
	return nil
}

// Create makes a worktree of the repository holding workspace at dir on a
// new branch made from the repository's HEAD. If dir already is that
// worktree (a re-run), Create describes it. A branch of that name that
// exists without the worktree is an error: it may hold someone's work.
func (g Git) Create(ctx context.Context, workspace, dir, branch string) (Info, error) {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return Info{}, fmt.Errorf("worktree of %s: %w", workspace, err)
	}
	if fi, err := os.Stat(ws); err != nil {
		return Info{}, fmt.Errorf("worktree of %s: %w", ws, errors.Unwrap(err))
	} else if !fi.IsDir() {
		return Info{}, fmt.Errorf("worktree of %s: not a directory", ws)
	}
	if err := CheckBranch(strings.TrimPrefix(branch, BranchPrefix)); err != nil {
		return Info{}, err
	}
	top, err := hostGit(ctx, ws, "rev-parse", "--show-toplevel")
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
	common, err := hostGit(ctx, top, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err == nil {
		common, err = filepath.EvalSymlinks(common)
	}
	if err != nil {
		return Info{}, fmt.Errorf("git directory of %s: %w", top, err)
	}
	if _, err := os.Stat(dir); err == nil {
		head, err := hostGit(ctx, dir, "rev-parse", "--abbrev-ref", "HEAD")
		if err != nil || head != branch {
			return Info{}, fmt.Errorf("worktree %s exists and is not on branch %s", dir, branch)
		}
		// A re-run: nothing ran in the worktree yet, so the branch's
		// commit is the base.
		if info.Base, err = hostGit(ctx, dir, "rev-parse", "--verify", branch+"^{commit}"); err != nil {
			return Info{}, fmt.Errorf("worktree %s: %w", dir, err)
		}
	} else {
		if info.Base, err = hostGit(ctx, top, "rev-parse", "--verify", "HEAD^{commit}"); err != nil {
			return Info{}, fmt.Errorf("repository %s has no commit to branch from: commit something first", top)
		}
		if _, err := hostGit(ctx, top, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
			return Info{}, fmt.Errorf("branch %s already exists in %s: delete it (git branch -D %s) or use another session id", branch, top, branch)
		}
		if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
			return Info{}, fmt.Errorf("worktree %s: %w", dir, err)
		}
		// No checkout here: it would run the repository's smudge filters
		// on the host. The files are checked out in the sandbox below.
		if _, err := hostGit(ctx, top, "worktree", "add", "--quiet", "--no-checkout", "-b", branch, dir, info.Base); err != nil {
			return Info{}, fmt.Errorf("create worktree %s of %s: %w", dir, top, err)
		}
	}
	if err := os.WriteFile(GitDirRecord(dir), []byte(common+"\n"), 0o600); err != nil {
		return Info{}, fmt.Errorf("create worktree %s: %w", dir, err)
	}
	if _, err := g.inWorktree(ctx, dir, "", []string{"reset", "--hard", "--quiet"}); err != nil {
		return Info{}, fmt.Errorf("check out worktree %s: %w", dir, err)
	}
	return info, nil
}

// Diff returns the worktree's change against base: what `git diff base`
// shows plus untracked files that are not ignored. It reads the worktree
// through a temporary index, so the worktree's own index is untouched.
func (g Git) Diff(ctx context.Context, dir, base string) (string, error) {
	// git wants a missing or valid index file, not an empty one.
	const tmpIndex = `GIT_INDEX_FILE=$(mktemp -u) && export GIT_INDEX_FILE && trap 'rm -f "$GIT_INDEX_FILE"' EXIT`
	out, err := g.inWorktree(ctx, dir, tmpIndex, []string{"add", "--all", "."},
		[]string{"diff", "--cached", "--no-color", "--no-ext-diff", "--no-textconv", base})
	if err != nil {
		return "", fmt.Errorf("diff of %s against %s: %w", dir, short(base), err)
	}
	return strings.TrimRight(out[1], "\n"), nil
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
func (g Git) Summarize(ctx context.Context, dir, branch, base string) (Summary, error) {
	s := Summary{Branch: branch, Base: base}
	out, err := g.inWorktree(ctx, dir, "",
		[]string{"log", "--no-color", "--format=%h %s", base + "..HEAD"},
		statusArgs,
		[]string{"diff", "--no-ext-diff", "--no-textconv", "--name-only", "--no-renames", "-z", base},
		[]string{"ls-files", "--others", "--exclude-standard", "-z"})
	if err != nil {
		return s, fmt.Errorf("branch of %s since %s: %w", dir, short(base), err)
	}
	s.Commits = lines(out[0])
	s.Uncommitted = len(lines(out[1]))
	files := slices.DeleteFunc(strings.Split(out[2]+"\x00"+out[3], "\x00"), func(f string) bool { return f == "" })
	slices.Sort(files)
	s.Files = slices.Compact(files)
	return s, nil
}

// statusArgs lists a worktree's uncommitted files, one a line.
var statusArgs = []string{"status", "--porcelain", "--untracked-files=all", "--no-renames"}

func lines(s string) []string {
	if s = strings.TrimRight(s, "\n"); s == "" {
		return nil
	}
	return strings.Split(s, "\n")
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
	switch {
	case s.Uncommitted > 0:
		b.WriteString(", uncommitted changes in " + plural(s.Uncommitted, "file"))
	case len(s.Commits) == 0:
		b.WriteString(", no changes")
	}
	return b.String()
}

// ErrUnsaved is returned (wrapped, saying what would be lost) by Remove
// without force for a worktree with uncommitted changes or a branch
// with commits no other branch has.
var ErrUnsaved = errors.New("unsaved work")

// Removed says what Remove did.
type Removed struct {
	// Unmerged counts the commits of the deleted branch that no other
	// branch has (force only); Tip is the commit it pointed at, from
	// which `git branch <branch> <tip>` brings it back.
	Unmerged int    `json:"unmerged,omitempty"`
	Tip      string `json:"tip,omitempty"`
}

// Remove removes the worktree at dir and deletes its branch from repo.
// Without force it refuses (ErrUnsaved) when that would lose work: the
// worktree has uncommitted changes, or the branch has commits that no
// other branch of repo has. A worktree or branch already gone is not an
// error, so a retry finishes the job; a repository gone leaves only the
// directory to remove.
func (g Git) Remove(ctx context.Context, repo, dir, branch string, force bool) (Removed, error) {
	if _, err := os.Stat(repo); errors.Is(err, fs.ErrNotExist) {
		if err := os.RemoveAll(dir); err != nil {
			return Removed{}, fmt.Errorf("remove worktree %s: %w", dir, err)
		}
		os.Remove(GitDirRecord(dir))
		return Removed{}, nil
	}
	var rm Removed
	ref := "refs/heads/" + branch
	tip, err := hostGit(ctx, repo, "rev-parse", "--verify", "--quiet", ref)
	if err == nil {
		count, err := hostGit(ctx, repo, "rev-list", "--count", ref, "--not", "--exclude="+branch, "--branches")
		if err != nil {
			return Removed{}, fmt.Errorf("commits of %s: %w", branch, err)
		}
		rm.Unmerged, _ = strconv.Atoi(count)
		rm.Tip = tip
	}
	_, statErr := os.Stat(dir)
	if !force {
		var lost []string
		if statErr == nil {
			out, err := g.inWorktree(ctx, dir, "", statusArgs)
			if err != nil {
				return Removed{}, fmt.Errorf("status of %s: %w", dir, err)
			}
			if n := len(lines(out[0])); n > 0 {
				lost = append(lost, fmt.Sprintf("uncommitted changes in %s", plural(n, "file")))
			}
		}
		if rm.Unmerged > 0 {
			lost = append(lost, fmt.Sprintf("%s on branch %s that no other branch has", plural(rm.Unmerged, "commit"), branch))
		}
		if len(lost) > 0 {
			return Removed{}, fmt.Errorf("%w: worktree %s has %s: commit them and merge the branch, or delete with --force (the branch's commits can then be brought back with git -C %s branch %s %s, until git gc prunes them)",
				ErrUnsaved, dir, strings.Join(lost, " and "), repo, branch, short(tip))
		}
	}
	if statErr == nil {
		if _, err := hostGit(ctx, repo, "worktree", "remove", "--force", "--force", dir); err != nil {
			// git refuses a worktree whose .git the agent rewrote; the
			// directory is the worker's to remove (no link is followed).
			if err := os.RemoveAll(dir); err != nil {
				return Removed{}, fmt.Errorf("remove worktree %s: %w", dir, err)
			}
		}
	}
	if _, err := hostGit(ctx, repo, "worktree", "prune"); err != nil {
		return Removed{}, fmt.Errorf("prune worktrees of %s: %w", repo, err)
	}
	os.Remove(GitDirRecord(dir))
	if rm.Tip == "" {
		return Removed{}, nil // already deleted
	}
	if _, err := hostGit(ctx, repo, "branch", "-D", branch); err != nil {
		return Removed{}, fmt.Errorf("delete branch %s: %w", branch, err)
	}
	if rm.Unmerged == 0 {
		rm.Tip = ""
	}
	return rm, nil
}

func plural(n int, one string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + one + "s"
}

func short(hash string) string { return hash[:min(len(hash), 7)] }

// hardened are the options of every git the worker and the starter run:
// the repository's hooks, fsmonitor, pager, signature check, automatic gc
// and transports switched off, whatever its configuration says. What is
// left that runs a program (a filter or diff driver the repository
// names) is why commands that read the worktree's files run in the
// sandbox (Git).
var hardened = []string{"--no-pager", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
	"-c", "core.pager=cat", "-c", "log.showSignature=false", "-c", "color.ui=false", "-c", "gc.auto=0",
	"-c", "maintenance.auto=false", "-c", "protocol.allow=never", "-c", "submodule.recurse=false"}

// gitEnv is the environment hostGit gives git, and Git's commands
// besides the bash tool's.
var gitEnv = []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1",
	"GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}

// hostGit runs git in dir on the host (hardened, with only PATH and
// TMPDIR of the worker's environment besides gitEnv, never its keys) and returns its output trimmed; a failure's error is git's own
// first line. It is the only git the worker and the starter run outside
// a sandbox: never a command that reads a worktree's files.
func hostGit(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append(append([]string{"-C", dir}, hardened...), args...)...)
	cmd.Env = slices.Clone(gitEnv)
	for _, k := range []string{"PATH", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %s", args[0], cmp.Or(line.First(strings.TrimSpace(stderr.String())), err.Error()))
	}
	return strings.TrimRight(out.String(), "\n"), nil
}

// inWorktree runs the git commands cmds one after another in dir through
// g.Runner (hardened, with gitEnv, after the shell line prelude) and
// returns the standard output of each; the first that fails ends the run
// and its error is git's first line. The outputs are parted by a random
// mark that no file name or commit subject in the worktree can forge.
func (g Git) inWorktree(ctx context.Context, dir, prelude string, cmds ...[]string) ([]string, error) {
	mark := "\n" + rand.Text() + "\n"
	var b strings.Builder
	if prelude != "" {
		b.WriteString(prelude + " || exit 1\n")
	}
	// Each command's stdout is the call's output, its stderr kept for
	// the error.
	b.WriteString("exec 3>&1\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "e=$(%s git %s 2>&1 >&3) || { printf %s \"$e\"; exit 1; }; printf %s\n",
			strings.Join(gitEnv, " "), tools.ShellQuote(append(slices.Clone(hardened), c...)...), tools.ShellQuote(mark+"git "+c[0]+": %s\n"), tools.ShellQuote(mark))
	}
	var out bytes.Buffer
	p, err := cmp.Or(g.Runner, tools.Local).Start(tools.Command{Script: b.String(), Dir: dir, Env: g.Env, Output: &out})
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, p.Kill)
	exit, err := p.Wait()
	stop()
	if err != nil {
		return nil, err
	}
	parts := strings.Split(out.String(), mark)
	if exit.Code != 0 || len(parts) != len(cmds)+1 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := cmp.Or(line.First(strings.TrimSpace(parts[len(parts)-1])), fmt.Sprintf("exit code %d", exit.Code))
		if exit.Limit != "" {
			msg = "stopped by the " + exit.Limit
		}
		return nil, errors.New(msg)
	}
	return parts[:len(cmds)], nil
}

// InRepo reports whether dir is inside a git work tree.
func InRepo(dir string) bool {
	out, err := hostGit(context.Background(), dir, "rev-parse", "--is-inside-work-tree")
	return err == nil && out == "true"
}
