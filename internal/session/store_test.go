package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

func TestAppend_CreatesFileWithHeaderAndPrivateModes(t *testing.T) {
	dir := t.TempDir() + "/data/sessions"
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := mustAppend(t, st, "s1", msgEntry("a", "", "user", "hi")); n != 1 {
		t.Fatalf("written = %d, want 1", n)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, st.Path("s1"): 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("mode of %s = %o, want %o", path, got, want)
		}
	}
	lines := strings.Split(strings.TrimSuffix(string(readFile(t, st.Path("s1"))), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("file has %d lines, want header + 1 entry:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	var h Header
	if err := json.Unmarshal([]byte(lines[0]), &h); err != nil {
		t.Fatal(err)
	}
	if h.Type != "session" || h.Version != FormatVersion || h.ID != "s1" || h.Timestamp.IsZero() {
		t.Errorf("header = %+v, want type session, version %d, id s1, a timestamp", h, FormatVersion)
	}
	s := mustLoad(t, st, "s1")
	if s.Header != h {
		t.Errorf("loaded header = %+v, want %+v", s.Header, h)
	}
}

func TestAppend_ZeroEntriesCreatesEmptySession(t *testing.T) {
	st := openStore(t)
	if n := mustAppend(t, st, "empty"); n != 0 {
		t.Fatalf("written = %d, want 0", n)
	}
	s := mustLoad(t, st, "empty")
	if len(s.Entries) != 0 || s.LeafID() != "" || s.Header.ID != "empty" {
		t.Fatalf("loaded %+v, want an empty session with a header", s)
	}
}

func TestAppend_ExistingIDIsNoOp(t *testing.T) {
	a := msgEntry("a", "", agent.RoleUser, "first")
	aRerun := msgEntry("a", "", agent.RoleUser, "re-run with other text")
	b := msgEntry("b", "a", agent.RoleAssistant, "answer")
	c := msgEntry("c", "b", agent.RoleUser, "more")
	tests := []struct {
		name        string
		calls       [][]Entry
		wantWritten []int
		wantIDs     string
		wantText    map[string]string
	}{
		{"same entry twice", [][]Entry{{a}, {a}}, []int{1, 0}, "a", nil},
		{"re-run with different content keeps the first", [][]Entry{{a}, {aRerun}}, []int{1, 0}, "a",
			map[string]string{"a": "first"}},
		{"duplicates within one call written once", [][]Entry{{a, b, a, b}}, []int{2}, "a,b", nil},
		{"mixed old and new writes only new", [][]Entry{{a, b}, {b, c, a}}, []int{2, 1}, "a,b,c", nil},
		{"whole batch repeated", [][]Entry{{a, b, c}, {a, b, c}, {a, b, c}}, []int{3, 0, 0}, "a,b,c", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openStore(t)
			for i, call := range tt.calls {
				if n := mustAppend(t, st, "s", call...); n != tt.wantWritten[i] {
					t.Fatalf("call %d: written = %d, want %d", i, n, tt.wantWritten[i])
				}
			}
			// A fresh store reads the file, not the cache.
			for _, reader := range []*Store{st, mustOpen(t, st.dir)} {
				s := mustLoad(t, reader, "s")
				if got := ids(s.Entries); got != tt.wantIDs {
					t.Fatalf("entries = %s, want %s", got, tt.wantIDs)
				}
				if len(s.Warnings) != 0 {
					t.Fatalf("warnings = %q, want none", s.Warnings)
				}
				for id, text := range tt.wantText {
					if e, _ := s.Get(id); e.Message.Text() != text {
						t.Fatalf("entry %s text = %q, want %q", id, e.Message.Text(), text)
					}
				}
			}
			if got, want := countLines(readFile(t, st.Path("s"))), 1+len(strings.Split(tt.wantIDs, ",")); got != want {
				t.Fatalf("file has %d lines, want %d", got, want)
			}
		})
	}
}

func mustOpen(t testing.TB, dir string) *Store {
	t.Helper()
	st, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestLoad_RoundTripsEntries(t *testing.T) {
	st := openStore(t)
	retry := false
	full := agent.Message{
		Role: agent.RoleAssistant, Provider: "anthropic", Model: "m",
		Content: []agent.ContentBlock{
			{Type: "text", Text: "line one\nline <two> & \"three\""},
			{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "t1", Name: "bash", Arguments: json.RawMessage(`{"cmd":"ls"}`)}},
		},
		StopReason: agent.StopReasonError, ErrorMessage: "overloaded", ErrorStatus: 529,
		ErrorType: "overloaded_error", ShouldRetry: &retry,
		Usage: &agent.Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4}, Timestamp: 1700000000000,
	}
	want := []Entry{
		msgEntry("u", "", agent.RoleUser, "hi"),
		{Type: TypeMessage, ID: "m", ParentID: "u", Timestamp: t0, Message: &full},
		compactionEntry("c", "m", "u", "summary text"),
	}
	mustAppend(t, st, "s", want...)
	for name, reader := range map[string]*Store{"cached": st, "fresh": mustOpen(t, st.dir)} {
		got := mustLoad(t, reader, "s").Entries
		if !reflect.DeepEqual(got, want) {
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(want)
			t.Errorf("%s load:\n got %s\nwant %s", name, gj, wj)
		}
	}
}

func TestLoad_MissingSessionIsNotFound(t *testing.T) {
	st := openStore(t)
	_, err := st.Load("nope")
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("Load = %v, want ErrNotFound naming the id", err)
	}
}

func TestLoad_TornLastLineIgnored(t *testing.T) {
	a := msgEntry("a", "", agent.RoleUser, "hi")
	b := msgEntry("b", "a", agent.RoleAssistant, "hello")
	bLine, _ := json.Marshal(msgEntry("c", "b", agent.RoleUser, "cut"))
	tests := []struct {
		name string
		tail string
	}{
		{"half a JSON object", string(bLine[:len(bLine)/2])},
		// A complete JSON line without its newline is kept instead:
		// TestLoad_ValidLastEntryWithoutNewlineIsKept.
		{"JSON object missing its last byte", string(bLine[:len(bLine)-1])},
		{"zero bytes from a lost block", "\x00\x00\x00\x00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openStore(t)
			mustAppend(t, st, "s", a, b)
			appendRaw(t, st.Path("s"), tt.tail)
			for name, reader := range map[string]*Store{"cached": st, "fresh": mustOpen(t, st.dir)} {
				s := mustLoad(t, reader, "s")
				if got := ids(s.Entries); got != "a,b" {
					t.Fatalf("%s: entries = %s, want a,b", name, got)
				}
				if len(s.Warnings) != 1 || !strings.HasPrefix(s.Warnings[0], "line 4: incomplete last line") {
					t.Fatalf("%s: warnings = %q, want one about an incomplete line 4", name, s.Warnings)
				}
			}
		})
	}
}

func TestLoad_TornFirstWriteIsNotFound(t *testing.T) {
	for name, content := range map[string]string{
		"empty file":     "",
		"partial header": `{"type":"session","vers`,
	} {
		t.Run(name, func(t *testing.T) {
			st := openStore(t)
			if err := os.WriteFile(st.Path("s"), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Load("s"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("Load = %v, want ErrNotFound", err)
			}
			// The first Append starts the file over.
			if n := mustAppend(t, st, "s", msgEntry("a", "", "user", "hi")); n != 1 {
				t.Fatalf("written = %d, want 1", n)
			}
			s := mustLoad(t, mustOpen(t, st.dir), "s")
			if ids(s.Entries) != "a" || len(s.Warnings) != 0 || s.Header.ID != "s" {
				t.Fatalf("after repair: header %+v entries %s warnings %q", s.Header, ids(s.Entries), s.Warnings)
			}
		})
	}
}

func TestAppend_RepairsTornTail(t *testing.T) {
	a := msgEntry("a", "", agent.RoleUser, "hi")
	b := msgEntry("b", "a", agent.RoleAssistant, "hello")
	c := msgEntry("c", "b", agent.RoleUser, "next")
	cLine, _ := json.Marshal(c)
	tests := []struct {
		name        string
		tail        string
		append      []Entry
		wantWritten int
		wantIDs     string
	}{
		{"torn line replaced by the new entry", string(cLine[:20]), []Entry{c}, 1, "a,b,c"},
		// The torn write of c never completed, so c was never written:
		// writing it again must not be skipped as a duplicate. (Complete
		// JSON without its newline is a written entry:
		// TestAppend_ValidLastEntryWithoutNewlineGetsNewline.)
		{"JSON missing its last byte is rewritten", string(cLine[:len(cLine)-1]), []Entry{c}, 1, "a,b,c"},
		{"repair with nothing new to write", "{\"ty", []Entry{b}, 0, "a,b"},
	}
	for _, tt := range tests {
		// The writer either has already loaded the torn file (its cache
		// knows the tail) or has never seen the session.
		for _, seen := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/writer saw tail=%v", tt.name, seen), func(t *testing.T) {
				st := openStore(t)
				mustAppend(t, st, "s", a, b)
				before := readFile(t, st.Path("s"))
				appendRaw(t, st.Path("s"), tt.tail)
				writer := mustOpen(t, st.dir)
				if seen {
					if s := mustLoad(t, writer, "s"); len(s.Warnings) != 1 {
						t.Fatalf("warnings before repair = %q, want one", s.Warnings)
					}
				}
				if n := mustAppend(t, writer, "s", tt.append...); n != tt.wantWritten {
					t.Fatalf("written = %d, want %d", n, tt.wantWritten)
				}
				after := readFile(t, st.Path("s"))
				if !strings.HasPrefix(string(after), string(before)) {
					t.Fatalf("earlier lines changed:\nbefore %q\nafter  %q", before, after)
				}
				// Every byte after the old content is a whole new line: header +
				// one line per entry, nothing left of the torn tail.
				if got, want := countLines(after), 1+len(strings.Split(tt.wantIDs, ",")); got != want || after[len(after)-1] != '\n' {
					t.Fatalf("file has %d lines, want %d; new bytes %q", got, want, after[len(before):])
				}
				for name, reader := range map[string]*Store{"writer": writer, "other": st, "fresh": mustOpen(t, st.dir)} {
					s := mustLoad(t, reader, "s")
					if got := ids(s.Entries); got != tt.wantIDs {
						t.Fatalf("%s: entries = %s, want %s", name, got, tt.wantIDs)
					}
					if len(s.Warnings) != 0 {
						t.Fatalf("%s: warnings after repair = %q, want none", name, s.Warnings)
					}
				}
			})
		}
	}
}

func TestLoad_GarbageMiddleLinesSkippedWithWarnings(t *testing.T) {
	st := openStore(t)
	mustAppend(t, st, "s", msgEntry("a", "", agent.RoleUser, "hi"))
	appendRaw(t, st.Path("s"), strings.Join([]string{
		`not json at all`,                              // line 3
		`{"type":"message","id":"nomsg"}`,              // line 4
		`{"type":"message","message":{"role":"user"}}`, // line 5
		``, // line 6: blank lines are harmless, no warning
		`{"type":"message","id":"a","message":{"role":"user"}}`,  // line 7: duplicate
		`{"type":"branch_summary","id":"future","parentId":"a"}`, // line 8: newer type, kept
		`[1,2`, // line 9
	}, "\n")+"\n")
	mustAppend(t, st, "s", msgEntry("b", "future", agent.RoleAssistant, "ok")) // line 10

	wantWarnings := []string{
		"line 3: not JSON, skipped",
		`line 4: message entry "nomsg" has no message, skipped`,
		"line 5: entry has no id, skipped",
		`line 7: duplicate entry id "a", skipped (the first one counts)`,
		"line 9: not JSON, skipped",
	}
	for name, reader := range map[string]*Store{"cached": st, "fresh": mustOpen(t, st.dir)} {
		s := mustLoad(t, reader, "s")
		if got := ids(s.Entries); got != "a,future,b" {
			t.Errorf("%s: entries = %s, want a,future,b", name, got)
		}
		if !reflect.DeepEqual(s.Warnings, wantWarnings) {
			t.Errorf("%s: warnings =\n%q\nwant\n%q", name, s.Warnings, wantWarnings)
		}
		if got := texts(s.Context("b")); got != "user:hi,assistant:ok" {
			t.Errorf("%s: context = %s, want the branch through the unknown entry", name, got)
		}
	}
}

func TestLoad_BadHeaderIsError(t *testing.T) {
	tests := []struct {
		name    string
		content string
		wantErr string
	}{
		{"not JSON", "hello\n", "line 1 is not a session header"},
		{"an entry instead of a header", `{"type":"message","id":"a","message":{"role":"user"}}` + "\n", "line 1 is not a session header"},
		{"blank first line", "\n", "line 1 is not a session header"},
		{"newer format", `{"type":"session","version":99,"id":"s"}` + "\n", "format version 99"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := openStore(t)
			if err := os.WriteFile(st.Path("s"), []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := st.Load("s")
			if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), `session "s"`) {
				t.Fatalf("Load = %v, want an error naming the session and containing %q", err, tt.wantErr)
			}
			// Append must refuse too, and leave a foreign file alone.
			if _, err := st.Append("s", msgEntry("a", "", "user", "hi")); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Append = %v, want an error containing %q", err, tt.wantErr)
			}
			if got := string(readFile(t, st.Path("s"))); got != tt.content {
				t.Fatalf("file changed to %q", got)
			}
		})
	}
}

func TestLoad_HeaderIDMismatchWarns(t *testing.T) {
	st := openStore(t)
	mustAppend(t, st, "orig", msgEntry("a", "", "user", "hi"))
	if err := os.Rename(st.Path("orig"), st.Path("renamed")); err != nil {
		t.Fatal(err)
	}
	s := mustLoad(t, st, "renamed")
	if ids(s.Entries) != "a" || len(s.Warnings) != 1 || !strings.Contains(s.Warnings[0], `header id "orig" differs`) {
		t.Fatalf("entries %s warnings %q, want entry a and a header id warning", ids(s.Entries), s.Warnings)
	}
}

func TestList_SortedSessionIDs(t *testing.T) {
	st := openStore(t)
	for _, id := range []string{"b", "a-b", "a", "A"} {
		mustAppend(t, st, id)
	}
	for _, junk := range []string{"notes.txt", "bad id.jsonl", ".jsonl"} {
		if err := os.WriteFile(st.dir+"/"+junk, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(st.dir+"/dir.jsonl", 0o700); err != nil {
		t.Fatal(err)
	}
	got, err := st.List()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"A", "a", "a-b", "b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("List = %q, want %q", got, want)
	}
}

func TestOpen_PathIsAFileIsError(t *testing.T) {
	path := t.TempDir() + "/file"
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "open session store") {
		t.Fatalf("Open(file) = %v, want an error", err)
	}
}
