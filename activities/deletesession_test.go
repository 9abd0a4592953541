package activities

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/durableagent/durableagent/internal/session"
)

func deleteSession(t *testing.T, store *session.Store, in DeleteSessionInput) (DeleteSessionResult, error) {
	t.Helper()
	acts := &Activities{Sessions: store}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(acts.DeleteSession, activityName(DeleteSessionName))
	env.SetTestTimeout(20 * time.Second)
	v, err := env.ExecuteActivity(DeleteSessionName, in)
	var res DeleteSessionResult
	if err == nil {
		err = v.Get(&res)
	}
	return res, err
}

// Issue 20 item 7: deleting a session removes the full outputs of its
// truncated bash calls and the session itself, leaves another session's
// outputs alone, and a repeat (a retry after a crash) succeeds.
// Spec 14.3.3.
func TestDeleteSession_RemovesOutputsAndSession(t *testing.T) {
	store, ws := userBashStore(t)
	if _, err := store.Init("s2", session.Header{Cwd: ws}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"s1", "s2"} {
		res, err := userBash(t, store, context.Background(), UserBashInput{SessionID: id, EntryID: "b1", Command: "seq 1 200000", Workspace: ws})
		if err != nil || !res.Truncated {
			t.Fatalf("UserBash in %s = %+v, %v; want a truncated output", id, res, err)
		}
	}
	dir := filepath.Join(ws, ".durable-agent", "tmp", "s1")
	if fs, err := os.ReadDir(dir); err != nil || len(fs) == 0 {
		t.Fatalf("full outputs of s1 before delete: %v, %v", fs, err)
	}
	in := DeleteSessionInput{SessionID: "s1", Workspace: ws}
	res, err := deleteSession(t, store, in)
	if err != nil || res.OutputsDir != dir {
		t.Fatalf("DeleteSession = %+v, %v; want outputs dir %s", res, err, dir)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("outputs dir after delete: %v", err)
	}
	if _, err := store.Load("s1"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Load s1 after delete: %v, want not found", err)
	}
	if fs, err := os.ReadDir(filepath.Join(ws, ".durable-agent", "tmp", "s2")); err != nil || len(fs) == 0 {
		t.Fatalf("s2's outputs after deleting s1: %v, %v", fs, err)
	}
	if _, err := store.Load("s2"); err != nil {
		t.Fatalf("Load s2 after deleting s1: %v", err)
	}
	if res, err := deleteSession(t, store, in); err != nil || res.OutputsDir != "" {
		t.Fatalf("repeated DeleteSession = %+v, %v; want success with nothing left to remove", res, err)
	}
}

// A tmp directory replaced by a symbolic link (planted by a command in
// the workspace) is not followed: what it points to stays.
// Spec 14.3.3.
func TestDeleteSession_DoesNotFollowAPlantedLink(t *testing.T) {
	store, ws := userBashStore(t)
	outside := t.TempDir()
	victim := filepath.Join(outside, "s1")
	if err := os.MkdirAll(filepath.Join(victim, "keep"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".durable-agent"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, ".durable-agent", "tmp")); err != nil {
		t.Fatal(err)
	}
	if _, err := deleteSession(t, store, DeleteSessionInput{SessionID: "s1", Workspace: ws}); err != nil {
		t.Fatalf("DeleteSession: %v", err)
	}
	if _, err := os.Stat(filepath.Join(victim, "keep")); err != nil {
		t.Fatalf("a directory outside the workspace was removed through a link: %v", err)
	}
	if _, err := store.Load("s1"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Load after delete: %v, want not found", err)
	}
}
