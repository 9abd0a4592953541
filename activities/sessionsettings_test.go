package activities

import (
	"context"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
)

// A replaced setting is recorded in the session file once, after the
// leaf: a re-run of the activity (its worker lost after the write) finds
// the entry and neither fails nor writes it twice.
func TestSessionSettings_ChangeEntryOnceAfterTheLeaf(t *testing.T) {
	store, err := session.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	user := agent.TextMessage(agent.RoleUser, "hi")
	if _, err := store.Append("s1", session.Entry{Type: session.TypeMessage, ID: "u1", Timestamp: time.Now(), Message: &user}); err != nil {
		t.Fatal(err)
	}
	a := &Activities{Sessions: store}
	in := SessionSettingsInput{SessionID: "s1", Replace: true, Change: &session.SettingsChange{Key: "thinkingLevel", Value: "high"},
		ChangeEntryID: "c1"}
	for run := 1; run <= 2; run++ {
		if _, err := a.SessionSettings(context.Background(), in); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
	}
	sess, err := store.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	var changes []session.Entry
	for _, e := range sess.Entries {
		if e.CustomType == session.CustomSettingsChange {
			changes = append(changes, e)
		}
	}
	if len(changes) != 1 || changes[0].ID != "c1" || changes[0].ParentID != "u1" || string(changes[0].Data) != `{"key":"thinkingLevel","value":"high"}` {
		t.Fatalf("change entries = %+v, want one c1 after u1", changes)
	}
}
