package session

import (
	"testing"

	"github.com/durableagent/durableagent/agent"
)

// RunContext is the one place the compaction-aware run context is built:
// Context is its messages, and the entries keep their ids (the planner's
// items); only the part after the compaction is After.
func TestRunContext_SplitsAtTheLastCompaction(t *testing.T) {
	msg := func(id, parent string, role agent.Role, text string) Entry {
		m := agent.TextMessage(role, text)
		return Entry{Type: TypeMessage, ID: id, ParentID: parent, Message: &m}
	}
	s := &Session{Entries: []Entry{
		msg("a", "", agent.RoleUser, "one"),
		msg("b", "a", agent.RoleAssistant, "two"),
		msg("c", "b", agent.RoleUser, "three"),
		{Type: TypeCompaction, ID: "k", ParentID: "c", Summary: "sum", FirstKeptEntryID: "b"},
		msg("d", "k", agent.RoleAssistant, "four"),
	}}
	rc := s.RunContext("d")
	if rc.Compaction == nil || rc.Compaction.ID != "k" {
		t.Fatalf("Compaction = %+v, want entry k", rc.Compaction)
	}
	if ids(rc.Kept) != "b,c" || ids(rc.After) != "d" {
		t.Fatalf("Kept %s After %s, want b,c and d", ids(rc.Kept), ids(rc.After))
	}
	got := s.Context("d")
	want := []string{"sum", "two", "three", "four"}
	if len(got) != len(want) || got[0].Role != agent.RoleSummary {
		t.Fatalf("Context = %+v, want %v", got, want)
	}
	for i, w := range want {
		if got[i].Text() != w {
			t.Fatalf("Context[%d] = %q, want %q", i, got[i].Text(), w)
		}
	}
	plain := s.RunContext("c")
	if plain.Compaction != nil || len(plain.Kept) != 0 || ids(plain.After) != "a,b,c" {
		t.Fatalf("RunContext before the compaction = %+v", plain)
	}
}
