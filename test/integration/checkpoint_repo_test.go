package integration

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/checkpoint"
	"github.com/durableagent/durableagent/internal/client"
)

// Issue 42: a 20-turn job through a real worker and sandbox, each turn a
// bash call appending to a file that has an unstaged edit (so each adds a
// checkpoint, and git status stays the same), leaves the user's repository
// byte-for-byte as it was: git status, the stash, every ref (git log
// --all, for-each-ref), the index and every file under .git. Spec 20.1.
func TestIntegration_CheckpointsLeaveTheUsersRepositoryUntouched(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	ws := t.TempDir()
	gitIn(t, ws, "init", "-q")
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(ws, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "one\n")
	write("src/b.go", "package b\n")
	write(".gitignore", "*.log\n")
	gitIn(t, ws, "add", "-A")
	gitIn(t, ws, "commit", "-qm", "first")
	write("a.txt", "to stash\n")
	gitIn(t, ws, "stash", "-q")
	write("staged.txt", "staged\n")
	gitIn(t, ws, "add", "staged.txt")
	write("a.txt", "an unstaged edit\n")
	write("build.log", "ignored\n")
	write("new.txt", "untracked\n")
	snapshot := func() string {
		var b strings.Builder
		for _, args := range [][]string{{"status", "--porcelain=v2", "--untracked-files=all"}, {"stash", "list"},
			{"log", "--all", "--format=%H %s"}, {"for-each-ref"}} {
			fmt.Fprintf(&b, "git %s:\n%s\n", strings.Join(args, " "), gitIn(t, ws, args...))
		}
		err := filepath.WalkDir(filepath.Join(ws, ".git"), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			fmt.Fprintf(&b, "%s %x %v\n", strings.TrimPrefix(p, ws), sha256.Sum256(data), err)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	before := snapshot()

	in := client.PromptInput(e.s, "untouched", "twenty turns")
	in.Workspace = ws
	for i := range 20 {
		in.Model.Faults = append(in.Model.Faults, fmt.Sprintf(`tool:bash {"command":"echo turn %d >> a.txt"}`, i))
	}
	in.Model.Faults = append(in.Model.Faults, "text:done")
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	st, err := checkpoint.Open(activities.CheckpointDir(e.dataDir, "untouched"), checkpoint.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if list, err := st.List(context.Background()); err != nil || len(list) != 21 {
		t.Fatalf("checkpoints: %d %v, want 21 (before the prompt, after each of the 20 bash turns)", len(list), err)
	}
	if after := snapshot(); after != before {
		t.Fatalf("the user's repository changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
