package worktree_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/worktree"
)

// repo makes a git repository with one commit of a.txt and returns its
// top directory.
func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	run(t, dir, "init", "--quiet", "-b", "main")
	write(t, filepath.Join(dir, "a.txt"), "one\n")
	run(t, dir, "add", "a.txt")
	run(t, dir, "commit", "--quiet", "-m", "first")
	return dir
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// g runs the worktrees' git without a sandbox (tools.Local).
var g worktree.Git

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCreateDiffRemove(t *testing.T) {
	ctx := context.Background()
	r := repo(t)
	head := run(t, r, "rev-parse", "HEAD")
	dir := filepath.Join(t.TempDir(), "worktrees", "s1")
	info, err := g.Create(ctx, r, dir, worktree.Branch("s1"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Branch != "agent/s1" || info.Base != head || info.Workspace != dir || info.Dir != dir {
		t.Fatalf("info = %+v, want branch agent/s1 base %s in %s", info, head, dir)
	}
	if got := run(t, dir, "rev-parse", "--abbrev-ref", "HEAD"); got != "agent/s1" {
		t.Fatalf("worktree is on %q", got)
	}
	// A re-run describes the same worktree.
	again, err := g.Create(ctx, r, dir, worktree.Branch("s1"))
	if err != nil || again != info {
		t.Fatalf("re-run: %+v, %v; want %+v", again, err, info)
	}

	s, err := g.Summarize(ctx, dir, info.Branch, info.Base)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.String(); got != "branch agent/s1: no commits since "+head[:7]+", no changes" {
		t.Fatalf("summary of a fresh worktree = %q", got)
	}

	// A committed change, an uncommitted one and a new file.
	write(t, filepath.Join(dir, "a.txt"), "two\n")
	run(t, dir, "commit", "--quiet", "-am", "second")
	write(t, filepath.Join(dir, "a.txt"), "three\n")
	write(t, filepath.Join(dir, "new.txt"), "fresh\n")
	d, err := g.Diff(ctx, dir, info.Base)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-one", "+three", "+++ b/new.txt", "+fresh"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	if st := run(t, dir, "status", "--porcelain"); !strings.Contains(st, "?? new.txt") || strings.Contains(st, "A ") {
		t.Errorf("Diff changed the worktree's index: status %q", st)
	}
	if got := read(t, filepath.Join(r, "a.txt")); got != "one\n" {
		t.Errorf("main checkout changed: a.txt = %q", got)
	}
	s, err = g.Summarize(ctx, dir, info.Branch, info.Base)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Commits) != 1 || !strings.HasSuffix(s.Commits[0], " second") || s.Uncommitted != 2 {
		t.Fatalf("summary = %+v", s)
	}
	if got := strings.Join(s.Files, ","); got != "a.txt,new.txt" {
		t.Fatalf("summary files %q, want a.txt (committed and changed again) and the new file", got)
	}
	if got := s.String(); !strings.Contains(got, "1 commit since "+head[:7]) || !strings.Contains(got, "uncommitted changes in 2 files") {
		t.Fatalf("summary line = %q", got)
	}

	// Uncommitted changes and a commit no other branch has: refused
	// without force, saying what would be lost and how to keep it.
	tip := run(t, dir, "rev-parse", "HEAD")
	_, err = g.Remove(ctx, r, dir, info.Branch, false)
	if !errors.Is(err, worktree.ErrUnsaved) || !strings.Contains(err.Error(), "uncommitted changes in 2 files and 1 commit on branch agent/s1") ||
		!strings.Contains(err.Error(), "git -C "+r+" branch agent/s1 "+tip[:7]) {
		t.Fatalf("remove without force: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "new.txt")); err != nil {
		t.Fatalf("a refused remove touched the worktree: %v", err)
	}
	// Forced: both go; the tip brings the branch back.
	rm, err := g.Remove(ctx, r, dir, info.Branch, true)
	if err != nil || rm.Unmerged != 1 || rm.Tip != tip {
		t.Fatalf("remove --force = %+v, %v; want 1 unmerged commit at %s", rm, err, tip)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("worktree dir still there: %v", err)
	}
	if got := run(t, r, "branch", "--list", "agent/s1"); got != "" {
		t.Fatalf("branch still there: %q", got)
	}
	// Removing again is harmless.
	if _, err := g.Remove(ctx, r, dir, info.Branch, false); err != nil {
		t.Fatalf("second remove: %v", err)
	}
	run(t, r, "branch", "agent/s1", tip)
	if got := run(t, r, "log", "--format=%s", "-1", "agent/s1"); got != "second" {
		t.Fatalf("branch brought back at %q", got)
	}
	// The branch blocks a new worktree of the same name, clearly.
	_, err = g.Create(ctx, r, dir, worktree.Branch("s1"))
	if err == nil || !strings.Contains(err.Error(), "branch agent/s1 already exists") {
		t.Fatalf("create over a kept branch: %v", err)
	}
}

// A branch whose commits another branch has, and no uncommitted change:
// removed without force.
func TestRemoveDeletesMergedBranch(t *testing.T) {
	ctx := context.Background()
	r := repo(t)
	dir := filepath.Join(t.TempDir(), "s2")
	info, err := g.Create(ctx, r, dir, worktree.Branch("s2"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "a.txt"), "two\n")
	run(t, dir, "commit", "--quiet", "-am", "second")
	run(t, r, "merge", "--quiet", "--ff-only", info.Branch)
	rm, err := g.Remove(ctx, r, dir, info.Branch, false)
	if err != nil || rm.Unmerged != 0 {
		t.Fatalf("remove = %+v, %v; want the branch deleted", rm, err)
	}
	if got := run(t, r, "branch", "--list", "agent/s2"); got != "" {
		t.Fatalf("branch still there: %q", got)
	}
	if got := run(t, r, "worktree", "list"); strings.Contains(got, dir) {
		t.Fatalf("worktree still listed: %s", got)
	}
}

func TestCreateInSubdirectory(t *testing.T) {
	r := repo(t)
	sub := filepath.Join(r, "pkg")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "s3")
	info, err := g.Create(context.Background(), sub, dir, worktree.Branch("s3"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Workspace != filepath.Join(dir, "pkg") {
		t.Fatalf("workspace = %s, want the matching directory in the worktree", info.Workspace)
	}
	if real, _ := filepath.EvalSymlinks(r); info.Repo != real {
		t.Fatalf("repo = %s, want %s", info.Repo, real)
	}
}

func TestCreateNotARepository(t *testing.T) {
	ws := t.TempDir()
	_, err := g.Create(context.Background(), ws, filepath.Join(t.TempDir(), "s4"), worktree.Branch("s4"))
	if !errors.Is(err, worktree.ErrNotRepo) {
		t.Fatalf("err = %v, want ErrNotRepo", err)
	}
	if msg := err.Error(); !strings.Contains(msg, ws) || strings.Contains(msg, "\n") {
		t.Fatalf("error %q does not name %s on one line", msg, ws)
	}
}

// The host's git (hostGit) runs on a .git the agent can write: a
// post-checkout hook and an fsmonitor command planted there run on none
// of Create, Diff, Summarize and Remove. (Without a sandbox, tools.Local:
// Git's worktree commands are hardened the same way.)
func TestRepositoryCommandsDoNotRun(t *testing.T) {
	ctx := context.Background()
	r := repo(t)
	marker := filepath.Join(t.TempDir(), "ran")
	script := "#!/bin/sh\necho \"$0\" >> " + marker + "\n"
	write(t, filepath.Join(r, ".git", "hooks", "post-checkout"), script)
	hook := filepath.Join(r, ".git", "hooks", "post-checkout")
	fsmon := filepath.Join(t.TempDir(), "fsmonitor")
	write(t, fsmon, script)
	for _, p := range []string{hook, fsmon} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run(t, r, "config", "core.fsmonitor", fsmon)
	dir := filepath.Join(t.TempDir(), "worktrees", "s1")
	info, err := g.Create(ctx, r, dir, worktree.Branch("s1"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(info.Dir, "a.txt"), "two\n")
	if _, err := g.Diff(ctx, info.Dir, info.Base); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Summarize(ctx, info.Dir, info.Branch, info.Base); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("a command from the repository's .git ran as the worker: %s", b)
	}
}

// CheckBranch refuses exactly the valid session ids that git refuses in
// agent/<id> (git check-ref-format --branch).
func TestCheckBranchAgreesWithGit(t *testing.T) {
	for _, id := range []string{"s1", "a..b", "a.lock", "a.", ".a", "a.b", "a_b-c", "x.lockx", "a.lock.b", "-a", "a...", "lock", "v1.2.3"} {
		gitOK := exec.Command("git", "check-ref-format", "--branch", worktree.Branch(id)).Run() == nil
		err := worktree.CheckBranch(id)
		if (err == nil) != gitOK {
			t.Errorf("CheckBranch(%q) = %v; git check-ref-format accepts it: %v", id, err, gitOK)
		}
		if err != nil && (strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), id)) {
			t.Errorf("CheckBranch(%q) = %q: want one line naming the id", id, err)
		}
	}
}
