package session

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
)

var t0 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// msgEntry builds a message entry with one text block.
func msgEntry(id, parent string, role agent.Role, text string) Entry {
	m := agent.TextMessage(role, text)
	return Entry{Type: TypeMessage, ID: id, ParentID: parent, Timestamp: t0, Message: &m}
}

// errorEntry builds an assistant message that failed before producing
// content, as the model-call activity records a provider error.
func errorEntry(id, parent string, reason agent.StopReason) Entry {
	m := agent.Message{Role: agent.RoleAssistant, StopReason: reason, ErrorMessage: "503 Service Unavailable"}
	return Entry{Type: TypeMessage, ID: id, ParentID: parent, Timestamp: t0, Message: &m}
}

func compactionEntry(id, parent, firstKept, summary string) Entry {
	return Entry{Type: TypeCompaction, ID: id, ParentID: parent, Timestamp: t0,
		Summary: summary, FirstKeptEntryID: firstKept, TokensBefore: 1234}
}

func openStore(t testing.TB) *Store {
	t.Helper()
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return st
}

func mustAppend(t testing.TB, st *Store, id string, entries ...Entry) int {
	t.Helper()
	n, err := st.Append(id, entries...)
	if err != nil {
		t.Fatalf("Append(%q): %v", id, err)
	}
	return n
}

func mustLoad(t testing.TB, st *Store, id string) *Session {
	t.Helper()
	s, err := st.Load(id)
	if err != nil {
		t.Fatalf("Load(%q): %v", id, err)
	}
	return s
}

func ids(entries []Entry) string {
	var out []string
	for _, e := range entries {
		out = append(out, e.ID)
	}
	return strings.Join(out, ",")
}

func texts(msgs []agent.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Role)+":"+m.Text())
	}
	return strings.Join(out, ",")
}

// appendRaw adds bytes to a session file as another program (or a crashed
// write) would.
func appendRaw(t testing.TB, path, raw string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(raw); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func countLines(b []byte) int { return bytes.Count(b, []byte("\n")) }

// writeRaw writes a session file line by line without Append's checks, as a
// damaged or hand-edited file could look.
func writeRaw(t testing.TB, st *Store, id string, entries []Entry) {
	t.Helper()
	h, err := json.Marshal(Header{Type: HeaderType, Version: FormatVersion, ID: id, Timestamp: t0})
	if err != nil {
		t.Fatal(err)
	}
	b := append(h, '\n')
	for _, e := range entries {
		line, err := encodeLine(e)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, line...)
	}
	if err := os.WriteFile(st.Path(id), b, 0o600); err != nil {
		t.Fatal(err)
	}
}
