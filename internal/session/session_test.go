package session

import (
	"testing"

	"github.com/durableagent/durableagent/agent"
)

func TestBranch(t *testing.T) {
	u := agent.RoleUser
	tests := []struct {
		name    string
		entries []Entry
		leaf    string
		want    string
	}{
		{"linear", []Entry{msgEntry("a", "", u, "1"), msgEntry("b", "a", u, "2"), msgEntry("c", "b", u, "3")}, "c", "a,b,c"},
		{"leaf in the middle", []Entry{msgEntry("a", "", u, "1"), msgEntry("b", "a", u, "2"), msgEntry("c", "b", u, "3")}, "b", "a,b"},
		{"sibling branch left out", []Entry{msgEntry("a", "", u, "1"), msgEntry("b", "a", u, "2"), msgEntry("c", "a", u, "3")}, "c", "a,c"},
		{"missing parent stops the walk", []Entry{msgEntry("b", "gone", u, "2"), msgEntry("c", "b", u, "3")}, "c", "b,c"},
		{"cycle stops the walk", []Entry{msgEntry("a", "c", u, "1"), msgEntry("b", "a", u, "2"), msgEntry("c", "b", u, "3")}, "c", "a,b,c"},
		{"cycle above the leaf stops the walk", []Entry{msgEntry("a", "c", u, "1"), msgEntry("b", "a", u, "2"), msgEntry("c", "b", u, "3"), msgEntry("d", "c", u, "4")}, "d", "a,b,c,d"},
		{"entry that is its own parent", []Entry{msgEntry("a", "a", u, "1"), msgEntry("b", "a", u, "2")}, "b", "a,b"},
		{"unknown leaf", []Entry{msgEntry("a", "", u, "1")}, "zz", ""},
		{"empty leaf", []Entry{msgEntry("a", "", u, "1")}, "", ""},
		{"no entries", nil, "a", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A literal Session and a loaded one must agree.
			st := openStore(t)
			writeRaw(t, st, "s", tt.entries)
			for name, s := range map[string]*Session{"literal": {Entries: tt.entries}, "loaded": mustLoad(t, st, "s")} {
				if got := ids(s.Branch(tt.leaf)); got != tt.want {
					t.Errorf("%s: Branch(%q) = %s, want %s", name, tt.leaf, got, tt.want)
				}
			}
		})
	}
}

func TestSession_GetAndLeafID(t *testing.T) {
	entries := []Entry{msgEntry("a", "", agent.RoleUser, "1"), msgEntry("b", "a", agent.RoleAssistant, "2")}
	st := openStore(t)
	mustAppend(t, st, "s", entries...)
	for name, s := range map[string]*Session{"literal": {Entries: entries}, "loaded": mustLoad(t, st, "s")} {
		if e, ok := s.Get("b"); !ok || e.ParentID != "a" || e.Message.Text() != "2" {
			t.Errorf("%s: Get(b) = %+v, %v", name, e, ok)
		}
		if _, ok := s.Get("zz"); ok {
			t.Errorf("%s: Get(zz) found an entry", name)
		}
		if got := s.LeafID(); got != "b" {
			t.Errorf("%s: LeafID = %q, want b", name, got)
		}
	}
	if got := (&Session{}).LeafID(); got != "" {
		t.Errorf("empty session LeafID = %q, want empty", got)
	}
}

// SPEC 3.2 step 9 / 12.2: the failed assistant error is removed from the run context
// before continuing; the session history keeps it.
func TestContext_DroppedErrorStaysInFileButNotInContext(t *testing.T) {
	st := openStore(t)
	mustAppend(t, st, "s",
		msgEntry("A", "", agent.RoleUser, "do it"),
		errorEntry("B", "A", agent.StopReasonError),
		msgEntry("C", "A", agent.RoleAssistant, "done"),
	)
	s := mustLoad(t, mustOpen(t, st.dir), "s")
	if got := ids(s.Entries); got != "A,B,C" {
		t.Fatalf("file entries = %s, want A,B,C (the error stays in the history)", got)
	}
	if got := ids(s.Branch("C")); got != "A,C" {
		t.Fatalf("Branch(C) = %s, want A,C", got)
	}
	if got := texts(s.Context("C")); got != "user:do it,assistant:done" {
		t.Fatalf("Context(C) = %s, want the user message and the successful answer", got)
	}
	if got := s.LeafID(); got != "C" {
		t.Fatalf("LeafID = %q, want C", got)
	}
}

// Error and aborted assistant messages still on the branch are returned;
// the provider layer decides what to send.
func TestContext_KeepsErrorAndAbortedMessagesOnTheBranch(t *testing.T) {
	for _, reason := range []agent.StopReason{agent.StopReasonError, agent.StopReasonAborted} {
		t.Run(string(reason), func(t *testing.T) {
			s := &Session{Entries: []Entry{
				msgEntry("A", "", agent.RoleUser, "go"),
				errorEntry("B", "A", reason),
				msgEntry("C", "B", agent.RoleUser, "again"),
			}}
			got := s.Context("C")
			if len(got) != 3 || got[1].StopReason != reason || len(got[1].Content) != 0 {
				t.Fatalf("Context = %+v, want 3 messages with the empty %s message second", got, reason)
			}
		})
	}
}

func TestContext_CompactionRebuild(t *testing.T) {
	u, a := agent.RoleUser, agent.RoleAssistant
	base := []Entry{
		msgEntry("1", "", u, "u1"),
		msgEntry("2", "1", a, "a1"),
		msgEntry("3", "2", u, "u2"),
		msgEntry("4", "3", a, "a2"),
	}
	with := func(extra ...Entry) []Entry { return append(append([]Entry(nil), base...), extra...) }
	tests := []struct {
		name    string
		entries []Entry
		leaf    string
		want    string
	}{
		{"no compaction: every message on the branch", base, "4", "user:u1,assistant:a1,user:u2,assistant:a2"},
		{"summary, kept tail, then later messages", with(
			compactionEntry("c1", "4", "3", "S1"),
			msgEntry("5", "c1", u, "u3"),
		), "5", "compactionSummary:S1,user:u2,assistant:a2,user:u3"},
		{"compaction as the leaf", with(compactionEntry("c1", "4", "3", "S1")), "c1",
			"compactionSummary:S1,user:u2,assistant:a2"},
		{"first kept id not on the branch keeps only the summary", with(
			compactionEntry("c1", "4", "elsewhere", "S1"),
			msgEntry("5", "c1", u, "u3"),
		), "5", "compactionSummary:S1,user:u3"},
		{"the last compaction on the branch wins", with(
			compactionEntry("c1", "4", "3", "S1"),
			msgEntry("5", "c1", u, "u3"),
			msgEntry("6", "5", a, "a3"),
			compactionEntry("c2", "6", "5", "S2"),
			msgEntry("7", "c2", u, "u4"),
		), "7", "compactionSummary:S2,user:u3,assistant:a3,user:u4"},
		{"a compaction on another branch is ignored", with(
			compactionEntry("c1", "4", "3", "S1"),
			msgEntry("5", "4", u, "u3"),
		), "5", "user:u1,assistant:a1,user:u2,assistant:a2,user:u3"},
		{"dropped error after the compaction stays out", with(
			compactionEntry("c1", "4", "3", "S1"),
			msgEntry("5", "c1", u, "u3"),
			errorEntry("6", "5", agent.StopReasonError),
			msgEntry("7", "5", a, "a3"),
		), "7", "compactionSummary:S1,user:u2,assistant:a2,user:u3,assistant:a3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openStore(t)
			mustAppend(t, st, "s", tt.entries...)
			got := mustLoad(t, st, "s").Context(tt.leaf)
			if texts(got) != tt.want {
				t.Fatalf("Context(%s) =\n %s\nwant\n %s", tt.leaf, texts(got), tt.want)
			}
			if got[0].Role == agent.RoleSummary && got[0].Timestamp != t0.UnixMilli() {
				t.Fatalf("summary timestamp = %d, want the compaction's %d", got[0].Timestamp, t0.UnixMilli())
			}
		})
	}
}
