package session

import (
	"errors"
	"os"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

// TestDeleteRemovesSession: Delete removes the session file, a Load
// afterwards says not found (the cache does not keep it alive), another
// session stays, and a second Delete (a retry after a crash) succeeds.
// Spec 14.3.3.
func TestDeleteRemovesSession(t *testing.T) {
	st := openStore(t)
	for _, id := range []string{"gone", "kept"} {
		if _, err := st.Append(id, msgEntry("e1", "", agent.RoleUser, "hello "+id)); err != nil {
			t.Fatalf("Append %s: %v", id, err)
		}
	}
	if _, err := st.Load("gone"); err != nil { // fill the cache
		t.Fatalf("Load: %v", err)
	}
	if err := st.Delete("gone"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := os.Stat(st.Path("gone")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("session file after Delete: stat err = %v, want not exist", err)
	}
	if _, err := st.Load("gone"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load after Delete: err = %v, want ErrNotFound", err)
	}
	if ids, err := st.List(); err != nil || len(ids) != 1 || ids[0] != "kept" {
		t.Fatalf("List after Delete = %v, %v; want [kept]", ids, err)
	}
	if err := st.Delete("gone"); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	// A session created again under the same id starts empty.
	if _, err := st.Append("gone", msgEntry("e2", "", agent.RoleUser, "again")); err != nil {
		t.Fatalf("Append after Delete: %v", err)
	}
	sess, err := st.Load("gone")
	if err != nil || len(sess.Entries) != 1 || sess.Entries[0].ID != "e2" {
		t.Fatalf("Load of the new session = %+v, %v; want only e2", sess, err)
	}
}

// TestDeleteRefusesBadID: an id that is not a file name is refused
// before anything is touched.
// Spec 14.3.3.
func TestDeleteRefusesBadID(t *testing.T) {
	st := openStore(t)
	if err := st.Delete("../x"); err == nil {
		t.Fatal("Delete(../x) succeeded")
	}
}
