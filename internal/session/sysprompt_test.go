package session

import (
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

// The system prompt record is a custom entry: it survives a reload as
// written, the last one counts, it links the branch like any entry, and
// it never enters the run context the model is sent.
func TestSystemPromptRecord(t *testing.T) {
	st := openStore(t)
	if _, err := st.Init("s", Header{Cwd: "/ws"}); err != nil {
		t.Fatal(err)
	}
	u := agent.TextMessage(agent.RoleUser, "hi")
	first, err := SystemPromptEntry(SystemPromptRecord{Hash: strings.Repeat("a", 64), Bytes: 10, Sources: []string{"/ws/AGENTS.md"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	second, _ := SystemPromptEntry(SystemPromptRecord{Hash: strings.Repeat("b", 64), Bytes: 20}, "u1")
	if _, err := st.Append("s", first, Entry{Type: TypeMessage, ID: "u1", ParentID: first.ID, Message: &u}); err != nil {
		t.Fatal(err)
	}
	sess, err := st.Load("s")
	if err != nil {
		t.Fatal(err)
	}
	rec, ok := sess.SystemPrompt()
	if !ok || rec.Bytes != 10 || len(rec.Sources) != 1 || rec.Sources[0] != "/ws/AGENTS.md" {
		t.Fatalf("SystemPrompt() = %+v, %v", rec, ok)
	}
	if ctx := sess.Context("u1"); len(ctx) != 1 || ctx[0].Text() != "hi" {
		t.Fatalf("run context = %+v, want the user message alone", ctx)
	}
	if _, err := st.Append("s", second); err != nil {
		t.Fatal(err)
	}
	sess, _ = st.Load("s")
	if rec, _ := sess.SystemPrompt(); rec.Bytes != 20 {
		t.Fatalf("after a second record: %+v, want the last one", rec)
	}
	if _, ok := (&Session{}).SystemPrompt(); ok {
		t.Fatal("an empty session has a system prompt record")
	}
}
