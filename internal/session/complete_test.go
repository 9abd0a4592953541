package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
)

// headerLine is a session header for id "s" as the store writes it.
func headerLine(t testing.TB) []byte {
	t.Helper()
	h, err := json.Marshal(Header{Type: HeaderType, Version: FormatVersion, ID: "s", Timestamp: t0})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func entryLine(t testing.TB, e Entry) []byte {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loadBoth loads s with the given store (its cache) and with a fresh one,
// and checks that both agree.
func loadBoth(t *testing.T, st *Store) *Session {
	t.Helper()
	cached := mustLoad(t, st, "s")
	fresh := mustLoad(t, mustOpen(t, st.dir), "s")
	if !reflect.DeepEqual(cached, fresh) {
		t.Fatalf("cached load %s %q differs from fresh load %s %q",
			ids(cached.Entries), cached.Warnings, ids(fresh.Entries), fresh.Warnings)
	}
	return fresh
}

func TestLoad_ValidLastEntryWithoutNewlineIsKept(t *testing.T) {
	a := msgEntry("a", "", agent.RoleUser, "hi")
	b := msgEntry("b", "a", agent.RoleAssistant, "hello")
	c := msgEntry("c", "b", agent.RoleUser, "last, no newline")
	for _, tail := range []string{string(entryLine(t, c)), "  " + string(entryLine(t, c)) + " \t"} {
		st := openStore(t)
		mustAppend(t, st, "s", a, b)
		appendRaw(t, st.Path("s"), tail)
		s := loadBoth(t, st)
		if got := ids(s.Entries); got != "a,b,c" || len(s.Warnings) != 0 {
			t.Fatalf("tail %q: entries %s warnings %q, want a,b,c and no warning", tail, got, s.Warnings)
		}
		if got := s.Context("c"); texts(got) != "user:hi,assistant:hello,user:last, no newline" {
			t.Fatalf("context = %s", texts(got))
		}
	}
}

func TestAppend_ValidLastEntryWithoutNewlineGetsNewline(t *testing.T) {
	a := msgEntry("a", "", agent.RoleUser, "hi")
	b := msgEntry("b", "a", agent.RoleAssistant, "hello")
	d := msgEntry("d", "b", agent.RoleUser, "next")
	// The writer either has already loaded the file or has never seen it.
	for _, seen := range []bool{true, false} {
		t.Run(fmt.Sprintf("writer saw the file=%v", seen), func(t *testing.T) {
			st := openStore(t)
			mustAppend(t, st, "s", a)
			appendRaw(t, st.Path("s"), string(entryLine(t, b)))
			before := readFile(t, st.Path("s"))
			writer := mustOpen(t, st.dir)
			if seen {
				mustLoad(t, writer, "s")
			}
			// b is in the file: a re-run writes nothing and changes nothing.
			if n := mustAppend(t, writer, "s", b); n != 0 {
				t.Fatalf("re-appending b wrote %d, want 0", n)
			}
			if got := readFile(t, st.Path("s")); !bytes.Equal(got, before) {
				t.Fatalf("a no-op Append changed the file:\nbefore %q\nafter  %q", before, got)
			}
			if n := mustAppend(t, writer, "s", b, d); n != 1 {
				t.Fatalf("written = %d, want 1", n)
			}
			dLine, _ := encodeLine(d)
			if got, want := string(readFile(t, st.Path("s"))), string(before)+"\n"+string(dLine); got != want {
				t.Fatalf("file =\n%q\nwant\n%q", got, want)
			}
			for name, reader := range map[string]*Store{"writer": writer, "other": st, "fresh": mustOpen(t, st.dir)} {
				s := mustLoad(t, reader, "s")
				if got := ids(s.Entries); got != "a,b,d" || len(s.Warnings) != 0 {
					t.Fatalf("%s: entries %s warnings %q, want a,b,d and none", name, got, s.Warnings)
				}
			}
		})
	}
}

func TestAppend_HeaderWithoutNewlineIsNeverRewritten(t *testing.T) {
	st := openStore(t)
	header := headerLine(t)
	if err := os.WriteFile(st.Path("s"), header, 0o600); err != nil {
		t.Fatal(err)
	}
	s := loadBoth(t, st)
	if !s.Header.Timestamp.Equal(t0) || len(s.Entries) != 0 || len(s.Warnings) != 0 {
		t.Fatalf("loaded header %+v entries %s warnings %q, want the file's header", s.Header, ids(s.Entries), s.Warnings)
	}
	if h, err := st.Init("s", Header{Cwd: "/elsewhere"}); err != nil || !h.Timestamp.Equal(t0) || h.Cwd != "" {
		t.Fatalf("Init = %+v, %v; want the existing header", h, err)
	}
	a := msgEntry("a", "", agent.RoleUser, "hi")
	mustAppend(t, st, "s", a)
	aLine, _ := encodeLine(a)
	if got, want := string(readFile(t, st.Path("s"))), string(header)+"\n"+string(aLine); got != want {
		t.Fatalf("file =\n%q\nwant the old header kept:\n%q", got, want)
	}
}

func TestLoad_CRAndCRLFLineEndingsAreRead(t *testing.T) {
	a := msgEntry("a", "", agent.RoleUser, "hi")
	b := msgEntry("b", "a", agent.RoleAssistant, "hello")
	c := msgEntry("c", "b", agent.RoleUser, "more")
	for _, eol := range []string{"\r\n", "\r"} {
		for _, final := range []bool{true, false} {
			t.Run(fmt.Sprintf("%q/final line break=%v", eol, final), func(t *testing.T) {
				st := openStore(t)
				lines := []string{string(headerLine(t)), string(entryLine(t, a)), "garbage", string(entryLine(t, b))}
				content := strings.Join(lines, eol)
				if final {
					content += eol
				}
				if err := os.WriteFile(st.Path("s"), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
				s := loadBoth(t, st)
				if got, want := ids(s.Entries), "a,b"; got != want || !reflect.DeepEqual(s.Warnings, []string{"line 3: not JSON, skipped"}) {
					t.Fatalf("entries %s warnings %q, want %s and a warning about line 3", got, s.Warnings, want)
				}
				// Appending keeps every byte and writes "\n" lines.
				mustAppend(t, st, "s", c)
				after := readFile(t, st.Path("s"))
				cLine, _ := encodeLine(c)
				want := content
				if !final {
					want += "\n"
				}
				if want += string(cLine); string(after) != want {
					t.Fatalf("file =\n%q\nwant\n%q", after, want)
				}
				s = loadBoth(t, st)
				if got := ids(s.Entries); got != "a,b,c" || !reflect.DeepEqual(s.Warnings, []string{"line 3: not JSON, skipped"}) {
					t.Fatalf("after Append: entries %s warnings %q", got, s.Warnings)
				}
			})
		}
	}
}

// TestLoad_CacheFollowsLineBreaksSplitAcrossReads grows a file a few bytes
// at a time, reading it between the writes, so that "\r\n" and a last line
// without a newline are split between reads: the cached read must count
// lines exactly as a fresh one does.
func TestLoad_CacheFollowsLineBreaksSplitAcrossReads(t *testing.T) {
	a, _ := encodeLine(msgEntry("a", "", agent.RoleUser, "hi"))
	b := entryLine(t, msgEntry("b", "a", agent.RoleAssistant, "hello"))
	steps := []string{
		string(headerLine(t)), "\r", "\n", // header, CRLF split
		string(bytes.TrimSuffix(a, []byte("\n"))), "\r", "xx\r\n", // lone CR, then garbage
		string(b), "  ", "\n", // complete line, grows by spaces
		string(b), "x\n", // complete-looking line that was longer
		`{"type":"mess`, "age\"}\r", // torn, then finished
	}
	st := openStore(t)
	var content []byte
	for i, step := range steps {
		content = append(content, step...)
		if err := os.WriteFile(st.Path("s"), content, 0o600); err != nil {
			t.Fatal(err)
		}
		// Filesystem timestamps are coarse; move them like a later write.
		later := time.Now().Add(time.Duration(i+1) * time.Hour)
		if err := os.Chtimes(st.Path("s"), later, later); err != nil {
			t.Fatal(err)
		}
		loadBoth(t, st)
	}
	s := loadBoth(t, st)
	want := []string{
		"line 3: not JSON, skipped",
		"line 5: not JSON, skipped", // b + "x"
		"line 6: entry has no id, skipped",
	}
	if got := ids(s.Entries); got != "a,b" {
		t.Fatalf("entries = %s, want a,b", got)
	}
	if !reflect.DeepEqual(s.Warnings, want) {
		t.Fatalf("warnings = %q, want %q", s.Warnings, want)
	}
}

func TestLoad_EachBadLineGetsOneWarningNamingIt(t *testing.T) {
	st := openStore(t)
	mustAppend(t, st, "s", msgEntry("a", "", agent.RoleUser, "hi")) // line 2
	appendRaw(t, st.Path("s"), strings.Join([]string{
		`{"type":"message","id":7,"message":{"role":"user"}}`,                 // line 3
		`{"type":"message","id":"m","message":{"role":"user","content":"x"}}`, // line 4
		`[1,2,3]`, // line 5
		`"text"`,  // line 6
		`{"type":"message","id":"a","message":{"role":"user"}}`, // line 7
		`garbage`,   // line 8
		`{"type":"`, // line 9, torn
	}, "\n"))
	want := []string{
		`line 3: field "id" has the wrong type (a JSON number, want string), skipped`,
		`line 4: field "message.content" has the wrong type (a JSON string, want []agent.ContentBlock), skipped`,
		"line 5: a JSON array, not an entry object, skipped",
		"line 6: a JSON string, not an entry object, skipped",
		`line 7: duplicate entry id "a", skipped (the first one counts)`,
		"line 8: not JSON, skipped",
		"line 9: incomplete last line (9 bytes without a newline that are not valid JSON, left by an interrupted write), ignored",
	}
	s := loadBoth(t, st)
	if !reflect.DeepEqual(s.Warnings, want) {
		t.Fatalf("warnings =\n%q\nwant\n%q", s.Warnings, want)
	}
}

func TestAppend_HeaderFollowedByGarbageIsNeverRewritten(t *testing.T) {
	st := openStore(t)
	content := string(headerLine(t)) + "\x00\x00garbage"
	if err := os.WriteFile(st.Path("s"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Load("s"); !errors.Is(err, ErrPermanent) || errors.Is(err, ErrNotFound) {
		t.Fatalf("Load = %v, want a permanent error", err)
	}
	if _, err := st.Append("s", msgEntry("a", "", agent.RoleUser, "hi")); !errors.Is(err, ErrPermanent) {
		t.Fatalf("Append = %v, want a permanent error", err)
	}
	if got := string(readFile(t, st.Path("s"))); got != content {
		t.Fatalf("file changed to %q", got)
	}
}

// checkPermanent checks that err wraps ErrPermanent and is one line naming
// the file and containing want.
func checkPermanent(t *testing.T, op string, err error, path, want string) {
	t.Helper()
	if !errors.Is(err, ErrPermanent) {
		t.Fatalf("%s = %v, want an error wrapping ErrPermanent", op, err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, path) || !strings.Contains(msg, want) {
		t.Fatalf("%s error %q: want one line naming %s and saying %q", op, msg, path, want)
	}
}

func TestLoad_BadHeaderLineIsPermanentError(t *testing.T) {
	for name, content := range map[string]string{
		"not JSON":          "hello\n",
		"an entry":          `{"type":"message","id":"a","message":{"role":"user"}}` + "\n",
		"wrong field types": `{"type":"session","version":"1","id":"s"}` + "\n",
		"no newline":        `{"type":"message","id":"a","message":{"role":"user"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			st := openStore(t)
			if err := os.WriteFile(st.Path("s"), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := st.Load("s")
			checkPermanent(t, "Load", err, st.Path("s"), "line 1 is not a session header")
			_, err = st.Append("s", msgEntry("a", "", agent.RoleUser, "hi"))
			checkPermanent(t, "Append", err, st.Path("s"), "line 1 is not a session header")
			_, err = st.Init("s", Header{Cwd: "/w"})
			checkPermanent(t, "Init", err, st.Path("s"), "line 1 is not a session header")
		})
	}
}

func TestLoad_NewerFormatVersionIsPermanentError(t *testing.T) {
	st := openStore(t)
	content := fmt.Sprintf(`{"type":"session","version":%d,"id":"s"}`+"\n", FormatVersion+1)
	if err := os.WriteFile(st.Path("s"), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("format version %d, newer than this build reads", FormatVersion+1)
	_, err := st.Load("s")
	checkPermanent(t, "Load", err, st.Path("s"), want)
	_, err = st.Append("s", msgEntry("a", "", agent.RoleUser, "hi"))
	checkPermanent(t, "Append", err, st.Path("s"), want)
	if got := string(readFile(t, st.Path("s"))); got != content {
		t.Fatalf("file changed to %q", got)
	}
}

func TestLoad_DirectoryInPlaceOfFileIsPermanentError(t *testing.T) {
	st := openStore(t)
	if err := os.Mkdir(st.Path("s"), 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := st.Load("s")
	checkPermanent(t, "Load", err, st.Path("s"), "is a directory")
	_, err = st.Append("s", msgEntry("a", "", agent.RoleUser, "hi"))
	checkPermanent(t, "Append", err, st.Path("s"), "is a directory")
	_, err = st.Init("s", Header{Cwd: "/w"})
	checkPermanent(t, "Init", err, st.Path("s"), "is a directory")
}

func TestLoad_FIFOInPlaceOfFileIsPermanentErrorNotAHang(t *testing.T) {
	st := openStore(t)
	if err := syscall.Mkfifo(st.Path("s"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 2)
	go func() {
		_, err := st.Load("s")
		done <- err
		_, err = st.Append("s", msgEntry("a", "", agent.RoleUser, "hi"))
		done <- err
	}()
	for _, op := range []string{"Load", "Append"} {
		select {
		case err := <-done:
			checkPermanent(t, op, err, st.Path("s"), "not a regular file")
		case <-time.After(10 * time.Second):
			t.Fatalf("%s on a FIFO hangs", op)
		}
	}
	if fi, err := os.Lstat(filepath.Join(st.dir, "s.jsonl")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", fi, err)
	}
}
