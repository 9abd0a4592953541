package checkpoint_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/checkpoint"
)

func open(t *testing.T, lim checkpoint.Limits) *checkpoint.Store {
	t.Helper()
	s, err := checkpoint.Open(filepath.Join(t.TempDir(), "checkpoints", "s1"), lim)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func take(t *testing.T, s *checkpoint.Store, ws, label string) checkpoint.Checkpoint {
	t.Helper()
	c, err := s.Take(context.Background(), ws, checkpoint.Turn{Leaf: label})
	if err != nil {
		t.Fatalf("take %s: %v", label, err)
	}
	return c
}

// state describes every path under root (but .git) with its type, mode and
// contents, so two states compare as a user would see them.
func state(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.Name() == ".git" {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case rel == ".":
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			m[rel] = "link " + target
		case fi.IsDir():
			m[rel] = "dir"
		default:
			b, _ := os.ReadFile(p)
			m[rel] = fmt.Sprintf("%v %x", fi.Mode().Perm()&0o100, sha256.Sum256(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return string(out)
}

// A rewind restores every kind of change the issue names: an edit, a deleted
// file, a new directory, a symlink, a binary file and a mode change.
func TestRestore_EveryKindOfChange(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	s := open(t, checkpoint.Limits{})
	write(t, ws, map[string]string{"a.txt": "one\n", "gone.txt": "keep me\n", "bin.dat": "\x00\x01\x02\xff", "run.sh": "echo\n", "d/old/x": "x"})
	if err := os.Symlink("a.txt", filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	before := state(t, ws)
	c1 := take(t, s, ws, "turn 1")

	write(t, ws, map[string]string{"a.txt": "two\n", "newdir/sub/n.txt": "new", "bin.dat": "\xff\xfe\x00"})
	os.Remove(filepath.Join(ws, "gone.txt"))
	os.RemoveAll(filepath.Join(ws, "d"))
	os.Remove(filepath.Join(ws, "link"))
	os.Symlink("/etc/passwd", filepath.Join(ws, "link"))
	os.Chmod(filepath.Join(ws, "run.sh"), 0o755)
	os.Symlink("newdir", filepath.Join(ws, "newlink"))

	changes, err := s.Changes(ctx, ws, c1.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []checkpoint.Change{{"a.txt", "modified"}, {"bin.dat", "modified"}, {"d/old/x", "removed"}, {"gone.txt", "removed"},
		{"link", "modified"}, {"newdir/sub/n.txt", "added"}, {"newlink", "added"}, {"run.sh", "mode"}}
	if !reflect.DeepEqual(changes, want) {
		t.Fatalf("changes since turn 1:\n got %v\nwant %v", changes, want)
	}
	c2 := take(t, s, ws, "turn 2")
	after := state(t, ws)

	if err := s.Restore(ctx, ws, c1.ID); err != nil {
		t.Fatal(err)
	}
	if got := state(t, ws); !reflect.DeepEqual(got, before) {
		t.Fatalf("after rewind to turn 1:\n got %v\nwant %v", got, before)
	}
	if err := s.Restore(ctx, ws, c2.ID); err != nil {
		t.Fatal(err)
	}
	if got := state(t, ws); !reflect.DeepEqual(got, after) {
		t.Fatalf("after undoing the rewind:\n got %v\nwant %v", got, after)
	}
	changes, err = s.Changes(ctx, ws, c1.ID, c2.ID)
	if err != nil || len(changes) != len(want) {
		t.Fatalf("changes turn 1..2: %v %v", changes, err)
	}
}

// A file replaced by a directory and back, and a directory by a symlink.
func TestRestore_TypeChanges(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	s := open(t, checkpoint.Limits{})
	write(t, ws, map[string]string{"f": "file", "dir/x": "x"})
	before := state(t, ws)
	c1 := take(t, s, ws, "1")
	os.Remove(filepath.Join(ws, "f"))
	write(t, ws, map[string]string{"f/inner": "now a dir"})
	os.RemoveAll(filepath.Join(ws, "dir"))
	os.Symlink("f", filepath.Join(ws, "dir"))
	if err := s.Restore(ctx, ws, c1.ID); err != nil {
		t.Fatal(err)
	}
	if got := state(t, ws); !reflect.DeepEqual(got, before) {
		t.Fatalf("got %v\nwant %v", got, before)
	}
}

// Take in a git workspace 20 times and a Restore leave the user's
// repository byte-for-byte unchanged: status, stash, all refs, the index and
// .git's every file.
func TestTake_UserRepositoryUntouched(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	run(t, ws, "git", "init", "-q")
	write(t, ws, map[string]string{"a": "1", "b/c": "2", ".gitignore": "*.log\n"})
	run(t, ws, "git", "add", "-A")
	run(t, ws, "git", "commit", "-qm", "one")
	write(t, ws, map[string]string{"a": "stash me"})
	run(t, ws, "git", "stash", "-q")
	write(t, ws, map[string]string{"staged": "s"})
	run(t, ws, "git", "add", "staged")
	write(t, ws, map[string]string{"a": "unstaged edit", "x.log": "ignored"})
	snap := func() string {
		var b strings.Builder
		for _, args := range [][]string{{"status", "--porcelain=v2", "--untracked-files=all"}, {"stash", "list"}, {"log", "--all", "--format=%H %s"}, {"for-each-ref"}} {
			b.WriteString(run(t, ws, append([]string{"git"}, args...)...))
		}
		for p, v := range state(t, filepath.Join(ws, ".git")) {
			b.WriteString(p + " " + v + "\n")
		}
		idx, _ := os.ReadFile(filepath.Join(ws, ".git", "index"))
		return b.String() + fmt.Sprintf("%x", sha256.Sum256(idx))
	}
	before := snap()
	s := open(t, checkpoint.Limits{})
	first := take(t, s, ws, "before")
	for i := 0; i < 20; i++ {
		write(t, ws, map[string]string{fmt.Sprintf("turn%d", i): "t"})
		take(t, s, ws, fmt.Sprint(i))
	}
	if err := s.Restore(ctx, ws, first.ID); err != nil {
		t.Fatal(err)
	}
	if after := snap(); after != before {
		t.Fatalf("user repository changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// A workspace that is not a git repository works; the same tree twice gives
// a new id with an equal Tree; List is oldest first.
func TestTake_NonGitWorkspaceAndList(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	s := open(t, checkpoint.Limits{})
	write(t, ws, map[string]string{"a": "1"})
	c1 := take(t, s, ws, "first")
	c2 := take(t, s, ws, "second")
	if c1.ID == c2.ID || c1.Tree != c2.Tree {
		t.Fatalf("unchanged workspace: ids %s %s trees %s %s", c1.ID, c2.ID, c1.Tree, c2.Tree)
	}
	list, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != c1.ID || list[1].Leaf != "second" || list[1].N != 2 || list[1].Time.IsZero() {
		t.Fatalf("list: %+v", list)
	}
	if _, err := os.Stat(filepath.Join(ws, ".git")); err == nil {
		t.Fatal("Take created a .git in a plain workspace")
	}
}

// Ignored paths and files over MaxFileBytes are left out, the oversize ones
// listed; a file that grows past the bound is dropped from the next
// checkpoint, and Restore leaves both kinds alone.
func TestTake_IgnoredAndOversize(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	s := open(t, checkpoint.Limits{MaxFileBytes: 100})
	write(t, ws, map[string]string{".gitignore": "build/\n", "build/out": "ignored", "small": "s", "grows": "g", "big": strings.Repeat("b", 101)})
	c1 := take(t, s, ws, "1")
	if !reflect.DeepEqual(c1.Skipped, []string{"big"}) {
		t.Fatalf("skipped: %v", c1.Skipped)
	}
	write(t, ws, map[string]string{"grows": strings.Repeat("g", 200)})
	c2 := take(t, s, ws, "2")
	if !reflect.DeepEqual(c2.Skipped, []string{"big", "grows"}) {
		t.Fatalf("skipped: %v", c2.Skipped)
	}
	changes, _ := s.Changes(ctx, ws, c1.ID, c2.ID)
	if !reflect.DeepEqual(changes, []checkpoint.Change{{"grows", "removed"}}) {
		t.Fatalf("changes: %v", changes)
	}
	list, _ := s.List(ctx)
	if !reflect.DeepEqual(list[1].Skipped, c2.Skipped) {
		t.Fatalf("listed skipped: %v", list[1].Skipped)
	}
	write(t, ws, map[string]string{"small": "changed"})
	if err := s.Restore(ctx, ws, c1.ID); err != nil {
		t.Fatal(err)
	}
	got := state(t, ws)
	if _, ok := got["build/out"]; !ok {
		t.Fatal("restore deleted an ignored file")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "big")); len(b) != 101 {
		t.Fatal("restore touched an oversize file")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "small")); string(b) != "s" {
		t.Fatalf("small = %q", b)
	}
	// A path the checkpoint has is written, whatever is there now.
	if b, _ := os.ReadFile(filepath.Join(ws, "grows")); string(b) != "g" {
		t.Fatalf("grows = %q", b)
	}
}

// A nested repository (its .git a file naming a directory elsewhere) and a
// FIFO neither break a Take nor get read: the repository is left out and
// listed, the FIFO left out.
func TestTake_NestedRepositoryAndFIFO(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	elsewhere := t.TempDir()
	run(t, elsewhere, "git", "init", "-q")
	write(t, ws, map[string]string{"a": "1", "sub/.git": "gitdir: " + filepath.Join(elsewhere, ".git") + "\n", "sub/x": "x"})
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := open(t, checkpoint.Limits{})
	c := take(t, s, ws, "1")
	if !reflect.DeepEqual(c.Skipped, []string{"sub/"}) {
		t.Fatalf("skipped: %v", c.Skipped)
	}
	write(t, ws, map[string]string{"sub/x": "changed"})
	if changes, err := s.Changes(ctx, ws, c.ID, ""); err != nil || len(changes) != 0 {
		t.Fatalf("changes: %v %v", changes, err)
	}
}

// Over a thousand changed paths at once are added through one walk instead
// of a pathspec each; oversize files and nested repositories stay out, and a
// directory replaced by a link at the same time is recorded as one.
func TestTake_ManyChangesAtOnce(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	s := open(t, checkpoint.Limits{MaxFileBytes: 100})
	write(t, ws, map[string]string{"dir/x": "x"})
	c0 := take(t, s, ws, "0")
	files := map[string]string{"big": strings.Repeat("b", 101), "other/y": "y"}
	for i := 0; i < 1200; i++ {
		files[fmt.Sprintf("many/f%d", i)] = fmt.Sprint(i)
	}
	write(t, ws, files)
	run(t, filepath.Join(ws, "other"), "git", "init", "-q")
	os.RemoveAll(filepath.Join(ws, "dir"))
	os.Symlink("many", filepath.Join(ws, "dir"))
	c1 := take(t, s, ws, "1")
	if !reflect.DeepEqual(c1.Skipped, []string{"big", "other/"}) {
		t.Fatalf("skipped: %v", c1.Skipped)
	}
	changes, err := s.Changes(ctx, ws, c0.ID, c1.ID)
	// A directory that became a link is the link added and its files removed.
	if err != nil || len(changes) != 1202 || changes[0] != (checkpoint.Change{Path: "dir", Kind: "added"}) ||
		changes[1] != (checkpoint.Change{Path: "dir/x", Kind: "removed"}) {
		t.Fatalf("%d changes (%v), first %v", len(changes), err, changes[:min(3, len(changes))])
	}
}

// A data dir inside the workspace (a workspace that is the home directory)
// is never recorded: not the store, not the credentials, not the sessions.
func TestTake_DataDirInsideWorkspaceIsLeftOut(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	dataDir := filepath.Join(ws, ".durable-agent[1]")
	write(t, ws, map[string]string{"a": "1", ".durable-agent[1]/auth.json": "secret"})
	s, err := checkpoint.Open(filepath.Join(dataDir, "checkpoints", "s1"), checkpoint.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	c1 := take(t, s, ws, "1")
	write(t, ws, map[string]string{"a": "2", ".durable-agent[1]/sessions/s1.jsonl": "{}"})
	take(t, s, ws, "2")
	changes, err := s.Changes(ctx, ws, c1.ID, "")
	if err != nil || !reflect.DeepEqual(changes, []checkpoint.Change{{"a", "modified"}}) {
		t.Fatalf("changes: %v %v", changes, err)
	}
	if err := s.Restore(ctx, ws, c1.ID); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dataDir, "sessions", "s1.jsonl")); string(b) != "{}" {
		t.Fatal("restore touched the data dir")
	}
}

// Pruning by count drops the oldest; pruning by bytes frees the objects of
// dropped checkpoints.
func TestTake_Prunes(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	s := open(t, checkpoint.Limits{KeepCount: 3})
	var ids []string
	for i := 0; i < 5; i++ {
		write(t, ws, map[string]string{"f": fmt.Sprint(i)})
		ids = append(ids, take(t, s, ws, fmt.Sprint(i)).ID)
	}
	list, _ := s.List(ctx)
	if len(list) != 3 || list[0].ID != ids[2] || list[2].ID != ids[4] {
		t.Fatalf("kept %d, want the newest 3: %+v", len(list), list)
	}
	if err := s.Restore(ctx, ws, ids[0]); err == nil || !strings.Contains(err.Error(), "not a checkpoint") {
		t.Fatalf("restore of a pruned checkpoint: %v", err)
	}

	dir := filepath.Join(t.TempDir(), "store")
	sb, err := checkpoint.Open(dir, checkpoint.Limits{KeepBytes: 600 << 10, MaxFileBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ws2 := t.TempDir()
	for i := 0; i < 20; i++ { // the size is looked at every 10th Take
		// 200 KB of incompressible data per turn, so each turn is its own cost.
		b := make([]byte, 200<<10)
		rand.New(rand.NewSource(int64(i))).Read(b)
		os.WriteFile(filepath.Join(ws2, "blob"), b, 0o644)
		take(t, sb, ws2, fmt.Sprint(i))
	}
	list, _ = sb.List(ctx)
	if len(list) < 1 || len(list) > 4 || list[len(list)-1].Leaf != "19" || list[len(list)-1].N != 20 {
		t.Fatalf("kept %d checkpoints under 600 KB of 200 KB turns: %+v", len(list), list)
	}
	if n := du(t, filepath.Join(dir, "git", "objects")); n > 1200<<10 {
		t.Fatalf("store objects %d bytes after pruning to 600 KB", n)
	}
}

func du(t *testing.T, root string) int64 {
	var n int64
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			fi, _ := d.Info()
			n += fi.Size()
		}
		return nil
	})
	return n
}

// A Take cancelled while git runs (its process killed) leaves the store
// usable: the next Take is whole and can be restored.
func TestTake_InterruptedThenWhole(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	s := open(t, checkpoint.Limits{})
	files := map[string]string{}
	for i := 0; i < 1500; i++ {
		files[fmt.Sprintf("d%d/f%d", i%30, i)] = strings.Repeat(fmt.Sprint(i), 50)
	}
	write(t, ws, files)
	interrupted := false
	for _, d := range []time.Duration{2, 5, 10, 20, 40, 80} {
		cctx, cancel := context.WithTimeout(ctx, d*time.Millisecond)
		_, err := s.Take(cctx, ws, checkpoint.Turn{Leaf: "cancelled"})
		cancel()
		if err != nil {
			interrupted = true
			if !strings.Contains(err.Error(), "context deadline exceeded") {
				t.Fatalf("cancelled take: %v", err)
			}
		}
	}
	if !interrupted {
		t.Fatal("no Take was interrupted")
	}
	want := state(t, ws)
	c := take(t, s, ws, "whole")
	for p := range files {
		os.Remove(filepath.Join(ws, p))
	}
	if err := s.Restore(ctx, ws, c.ID); err != nil {
		t.Fatal(err)
	}
	if got := state(t, ws); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored %d paths, want %d", len(got), len(want))
	}
}

// TestHelperTakeLoop is the worker of TestTake_WorkerKilledMidTake: it
// takes checkpoints until it is killed.
func TestHelperTakeLoop(t *testing.T) {
	dir, ws := os.Getenv("CKPT_HELPER_STORE"), os.Getenv("CKPT_HELPER_WS")
	if dir == "" {
		t.Skip("the worker of TestTake_WorkerKilledMidTake")
	}
	s, err := checkpoint.Open(dir, checkpoint.Limits{})
	for i := 0; err == nil; i++ {
		write(t, ws, map[string]string{fmt.Sprintf("turn%d", i): "t"})
		_, err = s.Take(context.Background(), ws, checkpoint.Turn{Leaf: "helper"})
	}
	t.Fatal(err)
}

// gitsOf counts the running git processes of store dir doing verb.
func gitsOf(dir, verb string) (n int) {
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range pids {
		env, _ := os.ReadFile(filepath.Join(p, "environ"))
		cmdline, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		if bytes.Contains(env, []byte("GIT_DIR="+filepath.Join(dir, "git")+"\x00")) && bytes.Contains(cmdline, []byte("\x00"+verb+"\x00")) {
			n++
		}
	}
	return n
}

// A worker SIGKILLed while its git records the workspace leaves no git of
// the store running (one could rename its index into place under the next
// Take), and the next Take is whole.
func TestTake_WorkerKilledMidTake(t *testing.T) {
	ws, dir := t.TempDir(), filepath.Join(t.TempDir(), "store")
	files := map[string]string{}
	for i := 0; i < 3000; i++ {
		files[fmt.Sprintf("d%d/f%d", i%30, i)] = strings.Repeat(fmt.Sprint(i), 50)
	}
	write(t, ws, files)
	worker := exec.Command(os.Args[0], "-test.run=^TestHelperTakeLoop$")
	worker.Env = append(os.Environ(), "CKPT_HELPER_STORE="+dir, "CKPT_HELPER_WS="+ws)
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); gitsOf(dir, "add") == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			worker.Process.Kill()
			t.Fatal("the worker's git add never ran")
		}
	}
	worker.Process.Kill()
	worker.Wait()
	time.Sleep(200 * time.Millisecond)
	if n := gitsOf(dir, "add"); n > 0 {
		t.Fatalf("%d git add of the store still running 200 ms after its worker was killed", n)
	}
	s, err := checkpoint.Open(dir, checkpoint.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := state(t, ws)
	c := take(t, s, ws, "whole")
	os.RemoveAll(filepath.Join(ws, "d7"))
	if err := s.Restore(context.Background(), ws, c.ID); err != nil {
		t.Fatal(err)
	}
	if got := state(t, ws); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored %d paths, want %d", len(got), len(want))
	}
}

// Bad ids get a one-line error naming the id.
func TestBadIDs(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	s := open(t, checkpoint.Limits{})
	c := take(t, s, ws, "1")
	other := open(t, checkpoint.Limits{})
	foreign := take(t, other, ws, "elsewhere")
	for _, id := range []string{"", "nope", "HEAD", c.Tree, "--help", strings.Repeat("0", 40), foreign.ID} {
		errs := []error{s.Restore(ctx, ws, id)}
		_, err := s.Changes(ctx, ws, id, "")
		errs = append(errs, err)
		if id != "" {
			_, err = s.Diff(ctx, ws, c.ID, id, 100)
			errs = append(errs, err)
		}
		for _, err := range errs {
			if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), fmt.Sprintf("%q", id)) {
				t.Fatalf("id %q: %v", id, err)
			}
		}
	}
}

// A workspace that is not a directory gets one line naming it.
func TestTake_WorkspaceNotADirectory(t *testing.T) {
	s := open(t, checkpoint.Limits{})
	missing := filepath.Join(t.TempDir(), "gone")
	_, err := s.Take(context.Background(), missing, checkpoint.Turn{Leaf: "1"})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), missing) {
		t.Fatalf("take in a missing workspace: %v", err)
	}
}

// Diff is a unified diff cut at max bytes, saying so.
func TestDiff(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	s := open(t, checkpoint.Limits{})
	write(t, ws, map[string]string{"a": "old\n"})
	c := take(t, s, ws, "1")
	write(t, ws, map[string]string{"a": "new\n", "b": strings.Repeat("line\n", 1000)})
	d, err := s.Diff(ctx, ws, c.ID, "", 1<<20)
	if err != nil || !strings.Contains(d, "-old\n+new\n") || !strings.Contains(d, "+++ b/b") {
		t.Fatalf("diff: %v\n%s", err, d)
	}
	d, _ = s.Diff(ctx, ws, c.ID, "", 200)
	if len(d) > 260 || !strings.Contains(d, "[diff cut at 200 of") {
		t.Fatalf("cut diff (%d bytes):\n%s", len(d), d)
	}
}

// The workspace is hostile: its own .git/config asking for an fsmonitor and
// hooks, and a .gitattributes filter, run nothing and change nothing.
func TestSecurity_WorkspaceConfigRunsNothing(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	marker := filepath.Join(t.TempDir(), "pwned")
	run(t, ws, "git", "init", "-q")
	hooks := filepath.Join(ws, ".git", "hooks")
	for _, h := range []string{"pre-commit", "post-checkout", "post-index-change", "reference-transaction", "fsmonitor-watchman"} {
		os.WriteFile(filepath.Join(hooks, h), []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755)
	}
	cmd := "touch " + marker
	for _, kv := range [][2]string{{"core.fsmonitor", filepath.Join(hooks, "fsmonitor-watchman")}, {"core.hooksPath", hooks},
		{"filter.evil.clean", cmd}, {"filter.evil.smudge", cmd}, {"filter.evil.process", cmd}, {"filter.evil.required", "true"},
		{"diff.evil.textconv", cmd}, {"diff.evil.command", cmd}, {"diff.external", cmd}, {"core.pager", cmd}} {
		run(t, ws, "git", "config", kv[0], kv[1])
	}
	write(t, ws, map[string]string{".gitattributes": "* filter=evil diff=evil text eol=crlf ident\n", "a.txt": "one\n$Id$\n"})
	s := open(t, checkpoint.Limits{})
	c1 := take(t, s, ws, "1")
	write(t, ws, map[string]string{"a.txt": "two\n$Id$\n"})
	if _, err := s.Diff(ctx, ws, c1.ID, "", 1000); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Changes(ctx, ws, c1.ID, ""); err != nil {
		t.Fatal(err)
	}
	take(t, s, ws, "2")
	if err := s.Restore(ctx, ws, c1.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the workspace's git config ran a command")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "one\n$Id$\n" {
		t.Fatalf("restored a.txt = %q: attributes converted it", b)
	}
}

// A symlink planted where Restore writes never redirects the write outside
// the workspace.
func TestSecurity_RestoreNeverWritesThroughSymlink(t *testing.T) {
	ctx := context.Background()
	ws := t.TempDir()
	outside := t.TempDir()
	s := open(t, checkpoint.Limits{})
	write(t, ws, map[string]string{"sub/file": "inside", "top": "t"})
	c1 := take(t, s, ws, "1")
	os.RemoveAll(filepath.Join(ws, "sub"))
	os.Remove(filepath.Join(ws, "top"))
	os.Symlink(outside, filepath.Join(ws, "sub"))
	os.Symlink(filepath.Join(outside, "top"), filepath.Join(ws, "top"))
	take(t, s, ws, "2")
	if err := s.Restore(ctx, ws, c1.ID); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("restore wrote outside the workspace: %v", ents)
	}
	if fi, err := os.Lstat(filepath.Join(ws, "sub")); err != nil || !fi.IsDir() {
		t.Fatalf("sub is not a directory again: %v", err)
	}
	// Planted after the last checkpoint (unrecorded): still not followed.
	os.RemoveAll(filepath.Join(ws, "sub"))
	os.Symlink(outside, filepath.Join(ws, "sub"))
	if err := s.Restore(ctx, ws, c1.ID); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("restore wrote outside the workspace: %v", ents)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "sub", "file")); !bytes.Equal(b, []byte("inside")) {
		t.Fatalf("sub/file = %q", b)
	}
}

// A worker killed while it made a store (its git init midway: a
// config.lock and no attributes file) leaves a store the next Open makes
// again, instead of one every later Open refuses.
func TestOpen_AfterAnInitKilledMidway(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	if err := os.MkdirAll(filepath.Join(dir, "git"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"config", "config.lock", "HEAD"} {
		if err := os.WriteFile(filepath.Join(dir, "git", f), []byte("torn"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := checkpoint.Open(dir, checkpoint.Limits{})
	if err != nil {
		t.Fatalf("Open after a killed init: %v", err)
	}
	ws := t.TempDir()
	write(t, ws, map[string]string{"a": "1"})
	take(t, s, ws, "first")
}

// A store's Take after each kind of change records what a new store's first
// Take of the same files does: its index's stat data, older, hides no
// change. The guard for any Take that skips work on unchanged files (a stat
// walk of its own was tried and measured: docs/tools.md).
func TestTake_EachChangeMatchesAFreshStore(t *testing.T) {
	ws := t.TempDir()
	s := open(t, checkpoint.Limits{MaxFileBytes: 100})
	write(t, ws, map[string]string{".gitignore": "*.log\n", "a": "aaaa", "d/b": "bbbb", "d/e/c": "cccc", "x": "xxxx"})
	for _, step := range []struct {
		name   string
		change func()
	}{
		{"unchanged", func() {}},
		{"same-size edit", func() { write(t, ws, map[string]string{"a": "AAAA"}) }},
		{"chmod", func() { os.Chmod(filepath.Join(ws, "d/b"), 0o755) }},
		{"file replaced by a symlink", func() {
			os.Remove(filepath.Join(ws, "x"))
			os.Symlink("a", filepath.Join(ws, "x"))
		}},
		{"symlink retargeted", func() {
			os.Rename(filepath.Join(ws, "x"), filepath.Join(ws, "x.old"))
			os.Symlink("d/b", filepath.Join(ws, "x"))
			os.Remove(filepath.Join(ws, "x.old"))
		}},
		{"new file in an existing directory", func() { write(t, ws, map[string]string{"d/e/new": "n"}) }},
		{"new file in a new directory", func() { write(t, ws, map[string]string{"d/e/f/g/new": "n"}) }},
		{"deletion", func() { os.Remove(filepath.Join(ws, "d/e/c")) }},
		{"grown past the size bound", func() { write(t, ws, map[string]string{"a": strings.Repeat("a", 101)}) }},
		{"ignored file added", func() { write(t, ws, map[string]string{"d/e/f/out.log": "l"}) }},
		{"ignored file edited", func() { write(t, ws, map[string]string{"d/e/f/out.log": "m"}) }},
		{".gitignore edited", func() { write(t, ws, map[string]string{".gitignore": "*.txt\n"}) }},
	} {
		time.Sleep(120 * time.Millisecond) // stamps older than the last Take, as a turn later
		step.change()
		got, want := take(t, s, ws, step.name), take(t, open(t, checkpoint.Limits{MaxFileBytes: 100}), ws, "fresh")
		if got.Tree != want.Tree || !reflect.DeepEqual(got.Skipped, want.Skipped) {
			t.Fatalf("%s: recorded tree %s %v, git's whole walk %s %v", step.name, got.Tree, got.Skipped, want.Tree, want.Skipped)
		}
	}
}

// Opens of a new store at once (the worker's turn and a `starter
// checkpoints`, or two prompts of a session on two workers) make it once:
// an Open that waited for another's lock does not make it again over the
// checkpoints taken meanwhile.
func TestOpen_ConcurrentOpensLoseNoCheckpoint(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	ws := t.TempDir()
	write(t, ws, map[string]string{"a": "1"})
	const n = 6
	errs := make(chan error, n)
	for i := range n {
		go func() {
			s, err := checkpoint.Open(dir, checkpoint.Limits{})
			if err == nil {
				_, err = s.Take(context.Background(), ws, checkpoint.Turn{Leaf: fmt.Sprint(i)})
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	s, err := checkpoint.Open(dir, checkpoint.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != n {
		t.Fatalf("%d opens at once, each taking a checkpoint: the store lists %d", n, len(list))
	}
}
