package session

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

// FuzzLoad treats arbitrary bytes as a session file. `go test` runs it on
// its seeds (below and testdata/fuzz/FuzzLoad/); fuzzing is a bounded,
// documented command (docs/reliability.md):
//
//	go test -run='^$' -fuzz='^FuzzLoad$' -fuzztime=30s ./internal/session/
//
// Whatever the bytes, it checks that:
//   - Load never panics; it fails only for a missing or bad header;
//   - loaded entries have unique, non-empty ids, message entries have a
//     message, and Branch and Context terminate on every entry (parent
//     links may form cycles in a damaged file);
//   - reading the file in two steps (the store's incremental cache) gives
//     exactly what one fresh read gives;
//   - an Append after it keeps every complete line already in the file
//     and adds exactly one entry, or, for a bad header, fails and changes
//     nothing.
func FuzzLoad(f *testing.F) {
	header := `{"type":"session","version":1,"id":"s","timestamp":"2025-03-04T05:06:07Z"}` + "\n"
	user := `{"type":"message","id":"a","timestamp":"2025-03-04T05:06:07Z","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}` + "\n"
	answer := `{"type":"message","id":"b","parentId":"a","timestamp":"2025-03-04T05:06:07Z","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"stopReason":"stop"}}` + "\n"
	f.Add([]byte(header+user+answer), uint16(0))
	f.Add([]byte(header+user+answer[:40]), uint16(len(header)+3))
	f.Add([]byte(header+"not json\n"+user+"{}\n"+user), uint16(len(header)))
	f.Add([]byte(header+`{"type":"message","id":"x","parentId":"y","message":{"role":"user"}}`+"\n"+
		`{"type":"message","id":"y","parentId":"x","message":{"role":"user"}}`+"\n"), uint16(7))
	f.Add([]byte(`{"type":"session","version":2,"id":"s"}`+"\n"+user), uint16(1))
	f.Add([]byte(header[:30]), uint16(12))
	f.Add([]byte(header+`{"type":"compaction","id":"c","parentId":"b","summary":"S","firstKeptEntryId":"a"}`+"\n"), uint16(0))
	// Line breaks other than "\n", and last lines without one.
	crlf := strings.ReplaceAll(header+user+answer, "\n", "\r\n")
	f.Add([]byte(crlf), uint16(len(header)))
	f.Add([]byte(strings.ReplaceAll(header+user+answer, "\n", "\r")), uint16(len(header)+len(user)))
	f.Add([]byte(header+user+strings.TrimSuffix(answer, "\n")), uint16(len(header)+len(user)+10))
	f.Add([]byte(strings.TrimSuffix(header, "\n")), uint16(20))
	f.Add([]byte(strings.TrimSuffix(header, "\n")+"garbage"), uint16(len(header)-1))
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		dir := t.TempDir()
		st, err := Open(filepath.Join(dir, "one"))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, st.Path("s"), data, false)
		sess, loadErr := st.Load("s")
		if loadErr == nil {
			checkSession(t, sess)
		} else if sess != nil {
			t.Fatalf("Load returned a session with error %v", loadErr)
		}

		// The same bytes in two writes, read by one store between them.
		two, err := Open(filepath.Join(dir, "two"))
		if err != nil {
			t.Fatal(err)
		}
		cut := int(split) % (len(data) + 1)
		writeFile(t, two.Path("s"), data[:cut], false)
		_, _ = two.Load("s")
		writeFile(t, two.Path("s"), data[cut:], true)
		inc, incErr := two.Load("s")
		if (incErr == nil) != (loadErr == nil) {
			t.Fatalf("incremental read error %v, full read error %v", incErr, loadErr)
		}
		if loadErr == nil && (!sameEntries(inc.Entries, sess.Entries) || !slices.Equal(inc.Warnings, sess.Warnings)) {
			t.Fatalf("incremental read differs from a full read:\n%s %q\nvs\n%s %q",
				ids(inc.Entries), inc.Warnings, ids(sess.Entries), sess.Warnings)
		}

		checkAppend(t, st, data, sess, loadErr)
	})
}

// checkSession checks the invariants of a loaded session.
func checkSession(t *testing.T, sess *Session) {
	t.Helper()
	seen := map[string]bool{}
	for _, e := range sess.Entries {
		if e.ID == "" || seen[e.ID] {
			t.Fatalf("entry id %q empty or repeated in %s", e.ID, ids(sess.Entries))
		}
		seen[e.ID] = true
		if e.Type == TypeMessage && e.Message == nil {
			t.Fatalf("message entry %q without a message", e.ID)
		}
	}
	// The leaf is the last entry no other entry names as its parent (the
	// last entry when every one has a child: a cycle); an earlier entry
	// can be it when a damaged file names a later entry as a parent.
	parents := map[string]bool{}
	for _, e := range sess.Entries {
		parents[e.ParentID] = true
	}
	want := ""
	for i := len(sess.Entries) - 1; i >= 0 && want == ""; i-- {
		if !parents[sess.Entries[i].ID] {
			want = sess.Entries[i].ID
		}
	}
	if n := len(sess.Entries); want == "" && n > 0 {
		want = sess.Entries[n-1].ID
	}
	if sess.LeafID() != want {
		t.Fatalf("LeafID %q, want %q (the last entry without a child)", sess.LeafID(), want)
	}
	for _, e := range sess.Entries {
		branch := sess.Branch(e.ID)
		if len(branch) == 0 || len(branch) > len(sess.Entries) || branch[len(branch)-1].ID != e.ID {
			t.Fatalf("Branch(%q) = %s", e.ID, ids(branch))
		}
		onPath := map[string]bool{}
		for _, b := range branch {
			if onPath[b.ID] {
				t.Fatalf("Branch(%q) visits %q twice: %s", e.ID, b.ID, ids(branch))
			}
			onPath[b.ID] = true
		}
		if msgs := sess.Context(e.ID); len(msgs) > len(branch)+1 {
			t.Fatalf("Context(%q) has %d messages for a branch of %d", e.ID, len(msgs), len(branch))
		}
	}
	if sess.Branch("no such entry") != nil {
		t.Fatal("Branch of an unknown id is not nil")
	}
}

// checkAppend appends one entry after whatever the file holds and checks
// that nothing already written (every complete line) was lost.
func checkAppend(t *testing.T, st *Store, data []byte, sess *Session, loadErr error) {
	t.Helper()
	id := "fuzz-appended"
	parent := ""
	if sess != nil {
		for _, taken := sess.Get(id); taken; _, taken = sess.Get(id) {
			id += "-"
		}
		parent = sess.LeafID()
	}
	m := agent.TextMessage(agent.RoleUser, "appended")
	n, appendErr := st.Append("s", Entry{Type: TypeMessage, ID: id, ParentID: parent, Timestamp: t0, Message: &m})
	after, err := os.ReadFile(st.Path("s"))
	if err != nil {
		t.Fatal(err)
	}
	if loadErr != nil && !errors.Is(loadErr, ErrNotFound) {
		// A bad header: the file is not ours to repair.
		if appendErr == nil || !bytes.Equal(after, data) {
			t.Fatalf("Append after %v: error %v, file changed %t", loadErr, appendErr, !bytes.Equal(after, data))
		}
		return
	}
	if appendErr != nil || n != 1 {
		t.Fatalf("Append wrote %d, error %v", n, appendErr)
	}
	reread, err := Open(st.dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := reread.Load("s")
	if err != nil {
		t.Fatalf("Load after Append: %v", err)
	}
	if loadErr != nil { // no complete header before: a fresh session
		if len(got.Entries) != 1 || got.Entries[0].ID != id {
			t.Fatalf("fresh session after Append holds %s", ids(got.Entries))
		}
		return
	}
	complete := data[:bytes.LastIndexByte(data, '\n')+1]
	if !bytes.HasPrefix(after, complete) {
		t.Fatal("Append changed complete lines already in the file")
	}
	old := len(sess.Entries)
	if len(got.Entries) != old+1 || !sameEntries(got.Entries[:old], sess.Entries) || got.Entries[old].ID != id {
		t.Fatalf("after Append: %s, want %s + %s", ids(got.Entries), ids(sess.Entries), id)
	}
	for _, w := range got.Warnings {
		if strings.Contains(w, "incomplete last line") {
			t.Fatalf("torn tail survived an Append: %q", got.Warnings)
		}
	}
}

// sameEntries compares entries field by field (messages by value); nil
// and empty lists are the same.
func sameEntries(a, b []Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !reflect.DeepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

func writeFile(t *testing.T, path string, data []byte, appendTo bool) {
	t.Helper()
	flag := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if appendTo {
		flag = os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
