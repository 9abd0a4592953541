package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
)

// TestLoad_CacheFollowsChangesByAnotherStore checks the per-session cache
// against a file changed behind its back by another Store (standing in for
// another worker process) or another program: the cached Load must equal a
// fresh parse, and must read only the new bytes when the file only grew.
func TestLoad_CacheFollowsChangesByAnotherStore(t *testing.T) {
	const (
		readNone = "none"
		readNew  = "new bytes"
		readAll  = "whole file"
	)
	tests := []struct {
		name     string
		change   func(t *testing.T, other *Store, path string)
		wantIDs  string
		wantRead string
	}{
		{"unchanged", func(*testing.T, *Store, string) {}, "a,b", readNone},
		{"grew by an append", func(t *testing.T, other *Store, _ string) {
			mustAppend(t, other, "s", msgEntry("c", "b", agent.RoleUser, "more"))
		}, "a,b,c", readNew},
		{"grew by a torn line", func(t *testing.T, _ *Store, path string) {
			appendRaw(t, path, `{"type":"mess`)
		}, "a,b", readNew},
		{"shrank", func(t *testing.T, _ *Store, path string) {
			b := readFile(t, path)
			cut := bytes.LastIndexByte(b[:len(b)-1], '\n') + 1 // drop entry b
			if err := os.Truncate(path, int64(cut)); err != nil {
				t.Fatal(err)
			}
		}, "a", readAll},
		{"rewritten in place at the same size", func(t *testing.T, _ *Store, path string) {
			b := bytes.Replace(readFile(t, path), []byte("hello"), []byte("HELLO"), 1)
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			// Filesystem timestamps are coarse; make the change visible the
			// way a later write would.
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(path, later, later); err != nil {
				t.Fatal(err)
			}
		}, "a,b", readAll},
		{"rewritten in place, same header, longer", func(t *testing.T, _ *Store, path string) {
			b := readFile(t, path)
			header := b[:bytes.IndexByte(b, '\n')+1]
			var buf bytes.Buffer
			buf.Write(header)
			for _, id := range []string{"x", "y"} {
				line, err := encodeLine(msgEntry(id, "", agent.RoleUser, strings.Repeat(id, 500)))
				if err != nil {
					t.Fatal(err)
				}
				buf.Write(line)
			}
			if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "x,y", readAll},
		{"re-created in place with a new header and the same lines", func(t *testing.T, _ *Store, path string) {
			// Same inode, file grew and a newline sits where the cached
			// parse ended: only the header tells the files apart.
			b := readFile(t, path)
			end := bytes.IndexByte(b, '\n')
			var h Header
			if err := json.Unmarshal(b[:end], &h); err != nil {
				t.Fatal(err)
			}
			h.Timestamp = h.Timestamp.Add(time.Hour)
			header, err := json.Marshal(h)
			if err != nil || len(header) != end {
				t.Fatalf("new header %q (%v) has a different length", header, err)
			}
			line, err := encodeLine(msgEntry("c", "b", agent.RoleUser, "more"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, slices.Concat(header, b[end:], line), 0o600); err != nil {
				t.Fatal(err)
			}
		}, "a,b,c", readAll},
		{"deleted and created again", func(t *testing.T, _ *Store, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			third := mustOpen(t, strings.TrimSuffix(path, "/s.jsonl"))
			mustAppend(t, third, "s", msgEntry("x", "", agent.RoleUser, "new"), msgEntry("y", "x", agent.RoleUser, "new"),
				msgEntry("z", "y", agent.RoleUser, "new"))
		}, "x,y,z", readAll},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writer := openStore(t)
			mustAppend(t, writer, "s", msgEntry("a", "", agent.RoleUser, "hi"), msgEntry("b", "a", agent.RoleAssistant, "hello"))
			reader := mustOpen(t, writer.dir)
			mustLoad(t, reader, "s")
			path := writer.Path("s")
			sizeBefore := int64(len(readFile(t, path)))
			readBefore := reader.caches["s"].bytesRead

			tt.change(t, writer, path)

			got := mustLoad(t, reader, "s")
			want := mustLoad(t, mustOpen(t, writer.dir), "s")
			if ids(got.Entries) != tt.wantIDs || !reflect.DeepEqual(got, want) {
				t.Fatalf("cached load = %s %q %+v\nfresh load  = %s %q %+v\nwant ids %s",
					ids(got.Entries), got.Warnings, got.Header, ids(want.Entries), want.Warnings, want.Header, tt.wantIDs)
			}
			sizeAfter := int64(len(readFile(t, path)))
			read := reader.caches["s"].bytesRead - readBefore
			var wantBytes int64
			switch tt.wantRead {
			case readNew:
				wantBytes = sizeAfter - sizeBefore
			case readAll:
				wantBytes = sizeAfter
			}
			if read != wantBytes {
				t.Fatalf("reader parsed %d bytes, want %d (%s)", read, wantBytes, tt.wantRead)
			}

			// The reader's next Append must also see the change.
			if n := mustAppend(t, reader, "s", msgEntry("n", "", agent.RoleUser, "next")); n != 1 {
				t.Fatalf("written = %d, want 1", n)
			}
			if got, want := ids(mustLoad(t, mustOpen(t, writer.dir), "s").Entries), tt.wantIDs+",n"; got != want {
				t.Fatalf("after the reader's append: %s, want %s", got, want)
			}
		})
	}
}

func TestLoad_DeletedSessionIsNotFoundDespiteCache(t *testing.T) {
	st := openStore(t)
	mustAppend(t, st, "s", msgEntry("a", "", agent.RoleUser, "hi"))
	mustLoad(t, st, "s")
	if err := os.Remove(st.Path("s")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load("s"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Load after delete = %v, want ErrNotFound", err)
	}
	// Appending again starts a new session rather than trusting the cache.
	if n := mustAppend(t, st, "s", msgEntry("a", "", agent.RoleUser, "hi")); n != 1 {
		t.Fatalf("written = %d, want 1", n)
	}
}

func TestStore_EvictsLeastRecentlyUsedSessions(t *testing.T) {
	st := openStore(t)
	for i := 0; i <= maxCachedSessions; i++ {
		id := "s" + strings.Repeat("x", i)
		mustAppend(t, st, id, msgEntry("a", "", agent.RoleUser, "hi"))
	}
	if got := len(st.caches); got != maxCachedSessions {
		t.Fatalf("cached sessions = %d, want %d", got, maxCachedSessions)
	}
	if _, ok := st.caches["s"]; ok {
		t.Fatalf("the least recently used session is still cached")
	}
	// An evicted session still loads, from the file.
	if s := mustLoad(t, st, "s"); ids(s.Entries) != "a" {
		t.Fatalf("evicted session entries = %s, want a", ids(s.Entries))
	}
}
