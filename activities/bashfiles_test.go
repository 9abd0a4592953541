package activities

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/tools"
)

// SPEC 17.3: the snapshots around a bash command list what changed in the
// workspace (relative to it, in a subdirectory of the repository too): a
// new file, a tracked file edited, a file that was dirty before and is
// edited again, a deleted file; not what stayed as it was, nor what lies
// outside the workspace or is ignored.
func TestBashFiles_SnapshotsListWhatChanged(t *testing.T) {
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	ws := filepath.Join(repo, "svc")
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(repo, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"svc/kept.go", "svc/edited.go", "svc/dirty.go", "svc/gone.go", "outside.go"} {
		write(f, "package x\n")
	}
	write("svc/.gitignore", "build/\n")
	git("init", "--quiet")
	git("add", ".")
	git("commit", "--quiet", "-m", "base")
	write("svc/dirty.go", "package x // dirty before\n")

	before := snapshotWorkspace(context.Background(), tools.Local, os.Environ(), ws)
	time.Sleep(10 * time.Millisecond) // a later modification time
	write("svc/edited.go", "package y\n")
	write("svc/dirty.go", "package x // and edited again\n")
	write("svc/new/made.go", "package made\n")
	write("svc/build/out.bin", "ignored\n")
	write("outside.go", "package outside\n")
	if err := os.Remove(filepath.Join(ws, "gone.go")); err != nil {
		t.Fatal(err)
	}
	after := snapshotWorkspace(context.Background(), tools.Local, os.Environ(), ws)
	files, more, note := after.changedSince(before)
	if got := strings.Join(files, ","); got != "dirty.go,edited.go,gone.go,new/made.go" || more != 0 || note != "" {
		t.Fatalf("changed = %q (+%d, note %q), want dirty.go, edited.go, gone.go, new/made.go", got, more, note)
	}
	// git status wrote no index: the optional locks are off.
	if _, err := os.Stat(filepath.Join(repo, ".git", "index.lock")); err == nil {
		t.Fatal("git status left an index lock")
	}

	// Past MaxBashFiles the rest are counted.
	for i := range MaxBashFiles + 2 {
		write(filepath.Join("svc", "many", fmt.Sprintf("f%02d.txt", i)), "x\n")
	}
	files, more, _ = snapshotWorkspace(context.Background(), tools.Local, os.Environ(), ws).changedSince(after)
	if len(files) != MaxBashFiles || more != 2 {
		t.Fatalf("%d files listed, %d more; want %d and 2", len(files), more, MaxBashFiles)
	}
}

// Outside a git repository nothing is listed and the note says why.
func TestBashFiles_NotARepository(t *testing.T) {
	dir := t.TempDir()
	s := snapshotWorkspace(context.Background(), tools.Local, append(os.Environ(), "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir)), dir)
	files, _, note := s.changedSince(s)
	if files != nil || note != "the workspace is not in a git repository" {
		t.Fatalf("changed = %q, note %q; want none and that it is not a git repository", files, note)
	}
}
