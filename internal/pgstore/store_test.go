package pgstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/pgstore"
	"github.com/durableagent/durableagent/internal/pgtest"
	"github.com/durableagent/durableagent/internal/session"
)

// sessionStore is session.Backend (internal/app assigns a Store
// to it); both stores are tested through it.
type sessionStore interface {
	Load(sessionID string) (*session.Session, error)
	Append(sessionID string, entries ...session.Entry) (int, error)
	Init(sessionID string, where session.Header) (session.Header, error)
	Delete(sessionID string) error
}

var (
	_ sessionStore = (*pgstore.Store)(nil)
	_ sessionStore = (*session.Store)(nil)
)

var t0 = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

func msgEntry(id, parent string, role agent.Role, text string) session.Entry {
	m := agent.TextMessage(role, text)
	return session.Entry{Type: session.TypeMessage, ID: id, ParentID: parent, Timestamp: t0, Message: &m}
}

func compactionEntry(id, parent, firstKept, summary string) session.Entry {
	return session.Entry{Type: session.TypeCompaction, ID: id, ParentID: parent, Timestamp: t0,
		Summary: summary, FirstKeptEntryID: firstKept, TokensBefore: 1234}
}

func ids(entries []session.Entry) string {
	var out []string
	for _, e := range entries {
		out = append(out, e.ID)
	}
	return strings.Join(out, ",")
}

// env is one PostgreSQL server shared by the subtests of a test; each
// subtest gets a database of its own.
type env struct {
	srv *pgtest.Server
	n   atomic.Int64
}

func newEnv(t *testing.T) *env {
	return &env{srv: pgtest.Start(t, pgtest.Options{})}
}

// url creates a fresh database.
func (e *env) url(t *testing.T) string {
	return e.srv.CreateDatabase(t, fmt.Sprintf("db%d", e.n.Add(1)))
}

func open(t *testing.T, url string) *pgstore.Store {
	t.Helper()
	st, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(st.Close)
	return st
}

func mustAppend(t *testing.T, st sessionStore, id string, entries ...session.Entry) int {
	t.Helper()
	n, err := st.Append(id, entries...)
	if err != nil {
		t.Fatalf("Append(%q): %v", id, err)
	}
	return n
}

func mustLoad(t *testing.T, st sessionStore, id string) *session.Session {
	t.Helper()
	s, err := st.Load(id)
	if err != nil {
		t.Fatalf("Load(%q): %v", id, err)
	}
	return s
}

func jsonl(t *testing.T) *session.Store {
	st, err := session.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// The PostgreSQL store keeps the JSONL store's contract; each subtest
// names the rule.
func TestStore(t *testing.T) {
	e := newEnv(t)

	t.Run("AsideKeptReplacedAndDeletedWithTheSession", func(t *testing.T) {
		st := open(t, e.url(t))
		mustAppend(t, st, "aside", msgEntry("a", "", agent.RoleUser, "hi"))
		if b, err := st.Aside("aside", "a"); err != nil || b != nil {
			t.Fatalf("Aside before any Put = %q, %v; want none", b, err)
		}
		for _, v := range []string{"one", "two"} {
			if err := st.PutAside("aside", "a", []byte(v)); err != nil {
				t.Fatalf("PutAside %s: %v", v, err)
			}
		}
		if b, err := st.Aside("aside", "a"); err != nil || string(b) != "two" {
			t.Fatalf("Aside = %q, %v; want the last Put", b, err)
		}
		if err := st.Delete("aside"); err != nil {
			t.Fatal(err)
		}
		if b, err := st.Aside("aside", "a"); err != nil || b != nil {
			t.Fatalf("Aside after Delete = %q, %v; want none", b, err)
		}
	})

	t.Run("DeleteRemovesSessionAndEntriesAndIsRepeatable", func(t *testing.T) {
		st := open(t, e.url(t))
		mustAppend(t, st, "gone", msgEntry("a", "", agent.RoleUser, "hi"), msgEntry("b", "a", agent.RoleAssistant, "hello"))
		mustAppend(t, st, "kept", msgEntry("a", "", agent.RoleUser, "stay"))
		if err := st.Delete("gone"); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if _, err := st.Load("gone"); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("Load after Delete: err = %v, want ErrNotFound", err)
		}
		var left int
		if err := st.Pool().QueryRow(context.Background(),
			`SELECT count(*) FROM agent_session_entries WHERE session_id = 'gone'`).Scan(&left); err != nil || left != 0 {
			t.Fatalf("entry rows left after Delete = %d, %v; want 0", left, err)
		}
		if err := st.Delete("gone"); err != nil {
			t.Fatalf("second Delete (a retry): %v", err)
		}
		if ids, err := st.List(); err != nil || len(ids) != 1 || ids[0] != "kept" {
			t.Fatalf("List after Delete = %v, %v; want [kept]", ids, err)
		}
		if ids := ids(mustLoad(t, st, "kept").Entries); ids != "a" {
			t.Fatalf("kept session entries = %s, want a", ids)
		}
	})

	t.Run("AppendCreatesSessionWithHeaderEvenForZeroEntries", func(t *testing.T) {
		st := open(t, e.url(t))
		before := time.Now().Add(-time.Second)
		if n := mustAppend(t, st, "empty"); n != 0 {
			t.Fatalf("written = %d, want 0", n)
		}
		s := mustLoad(t, st, "empty")
		h := s.Header
		if h.Type != session.HeaderType || h.Version != session.FormatVersion || h.ID != "empty" || h.Cwd != "" ||
			h.Timestamp.Before(before) || h.Timestamp.Location() != time.UTC {
			t.Errorf("header = %+v, want type session, version %d, id empty, a UTC timestamp, no cwd", h, session.FormatVersion)
		}
		if len(s.Entries) != 0 || s.LeafID() != "" || len(s.Warnings) != 0 {
			t.Errorf("loaded %+v, want an empty session", s)
		}
	})

	t.Run("AppendExistingIDIsNoOpFirstWriteWins", func(t *testing.T) {
		a := msgEntry("a", "", agent.RoleUser, "first")
		aRerun := msgEntry("a", "", agent.RoleUser, "re-run with other text")
		b := msgEntry("b", "a", agent.RoleAssistant, "answer")
		c := msgEntry("c", "b", agent.RoleUser, "more")
		tests := []struct {
			name        string
			calls       [][]session.Entry
			wantWritten []int
			wantIDs     string
			wantText    map[string]string
		}{
			{"same entry twice", [][]session.Entry{{a}, {a}}, []int{1, 0}, "a", nil},
			{"re-run with different content keeps the first", [][]session.Entry{{a}, {aRerun}}, []int{1, 0}, "a",
				map[string]string{"a": "first"}},
			{"duplicates within one call written once", [][]session.Entry{{a, b, a, b}}, []int{2}, "a,b", nil},
			{"mixed old and new writes only new", [][]session.Entry{{a, b}, {b, c, a}}, []int{2, 1}, "a,b,c", nil},
			{"whole batch repeated", [][]session.Entry{{a, b, c}, {a, b, c}, {a, b, c}}, []int{3, 0, 0}, "a,b,c", nil},
		}
		url := e.url(t)
		st, other := open(t, url), open(t, url)
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				id := fmt.Sprintf("s%d", i)
				for i, call := range tt.calls {
					if n := mustAppend(t, st, id, call...); n != tt.wantWritten[i] {
						t.Fatalf("call %d: written = %d, want %d", i, n, tt.wantWritten[i])
					}
				}
				for _, reader := range []*pgstore.Store{st, other} {
					s := mustLoad(t, reader, id)
					if got := ids(s.Entries); got != tt.wantIDs {
						t.Fatalf("entries = %s, want %s", got, tt.wantIDs)
					}
					for id, text := range tt.wantText {
						if e, _ := s.Get(id); e.Message.Text() != text {
							t.Fatalf("entry %s text = %q, want %q", id, e.Message.Text(), text)
						}
					}
				}
			})
		}
	})

	t.Run("ConcurrentWorkersWriteEachIDOnce", func(t *testing.T) {
		// Several stores (as on several workers) append overlapping
		// batches at once: every id is stored exactly once, and the
		// counts add up to the number of distinct ids.
		url := e.url(t)
		const workers, rounds = 4, 20
		stores := make([]*pgstore.Store, workers)
		for i := range stores {
			stores[i] = open(t, url)
		}
		var total atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range rounds {
					batch := []session.Entry{
						msgEntry(fmt.Sprintf("e%d", r), "", agent.RoleUser, fmt.Sprintf("worker %d", w)),
						msgEntry(fmt.Sprintf("e%d", r+1), "", agent.RoleUser, fmt.Sprintf("worker %d", w)),
					}
					n, err := stores[w].Append("shared", batch...)
					if err != nil {
						errs <- err
						return
					}
					total.Add(int64(n))
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if total.Load() != rounds+1 {
			t.Errorf("written in all = %d, want %d", total.Load(), rounds+1)
		}
		s := mustLoad(t, stores[0], "shared")
		if len(s.Entries) != rounds+1 {
			t.Fatalf("stored %d entries (%s), want %d", len(s.Entries), ids(s.Entries), rounds+1)
		}
		var rows int
		if err := stores[0].Pool().QueryRow(context.Background(),
			`SELECT count(*) FROM agent_session_entries WHERE session_id = 'shared'`).Scan(&rows); err != nil || rows != rounds+1 {
			t.Fatalf("rows = %d (%v), want %d", rows, err, rounds+1)
		}
	})

	t.Run("SameEntriesSameSessionAsJSONL", func(t *testing.T) {
		// One script of appends, both stores: the entries, the leaf and
		// the run context (across a compaction and a dropped failed
		// message) come out identical, to the byte of a tool call's
		// arguments.
		retry := false
		full := agent.Message{
			Role: agent.RoleAssistant, Provider: "anthropic", Model: "m",
			Content: []agent.ContentBlock{
				{Type: "text", Text: "line one\nline <two> & \"three\" \u00e9\u4e16 \U0001F600 nul:\x00."},
				{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "t1", Name: "bash", Arguments: json.RawMessage(`{"cmd":"ls","n":1}`)}},
			},
			StopReason: agent.StopReasonError, ErrorMessage: "overloaded", ErrorStatus: 529,
			ErrorType: "overloaded_error", ShouldRetry: &retry,
			Usage: &agent.Usage{Input: 1, Output: 2, CacheRead: 3, CacheWrite: 4}, Timestamp: 1700000000000,
		}
		failed := agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonError, ErrorMessage: "503"}
		script := [][]session.Entry{
			{msgEntry("u1", "", agent.RoleUser, "hi")},
			{{Type: session.TypeMessage, ID: "x1", ParentID: "u1", Timestamp: t0, Message: &failed}},
			{{Type: session.TypeMessage, ID: "a1", ParentID: "u1", Timestamp: t0, Message: &full}},
			{msgEntry("u2", "a1", agent.RoleUser, "more"), msgEntry("a2", "u2", agent.RoleAssistant, "sure")},
			{compactionEntry("c1", "a2", "u2", "summary of the start")},
			{msgEntry("u3", "c1", agent.RoleUser, "after compaction"), msgEntry("u3", "c1", agent.RoleUser, "dup")},
			{msgEntry("a3", "u3", agent.RoleAssistant, "done")},
		}
		pg, fs := open(t, e.url(t)), jsonl(t)
		for i, call := range script {
			np, nf := mustAppend(t, pg, "s", call...), mustAppend(t, fs, "s", call...)
			if np != nf {
				t.Fatalf("call %d: written pg %d, jsonl %d", i, np, nf)
			}
		}
		sp, sf := mustLoad(t, pg, "s"), mustLoad(t, fs, "s")
		if !reflect.DeepEqual(sp.Entries, sf.Entries) {
			gp, _ := json.Marshal(sp.Entries)
			gf, _ := json.Marshal(sf.Entries)
			t.Fatalf("entries differ:\n  pg %s\njsonl %s", gp, gf)
		}
		if sp.LeafID() != sf.LeafID() || sp.LeafID() != "a3" {
			t.Fatalf("leaf pg %q, jsonl %q, want a3", sp.LeafID(), sf.LeafID())
		}
		cp, cf := sp.Context("a3"), sf.Context("a3")
		if !reflect.DeepEqual(cp, cf) || len(cp) != 5 || cp[0].Role != agent.RoleSummary {
			t.Fatalf("context pg %+v\njsonl %+v\nwant summary, u2, a2, u3, a3 minus the compaction", cp, cf)
		}
		// Stored as json, not jsonb, which would respace and reorder them.
		if got := string(sp.Entries[2].Message.Content[1].ToolCall.Arguments); got != `{"cmd":"ls","n":1}` {
			t.Errorf("tool arguments came back as %s, want them byte for byte", got)
		}
	})

	t.Run("SameValidationErrorsAsJSONL", func(t *testing.T) {
		pg, fs := open(t, e.url(t)), jsonl(t)
		good := msgEntry("ok", "", agent.RoleUser, "fine")
		bad := []session.Entry{
			{Type: session.TypeMessage, ID: "", Message: good.Message},
			{Type: session.TypeMessage, ID: "m"},
			{Type: "weird", ID: "w"},
			{Type: session.TypeCompaction, ID: "self", ParentID: "self"},
		}
		for _, b := range bad {
			_, ep := pg.Append("s", good, b)
			_, ef := fs.Append("s", good, b)
			if ep == nil || ef == nil || ep.Error() != ef.Error() {
				t.Errorf("Append(%+v): pg %v, jsonl %v; want the same error", b, ep, ef)
			}
		}
		for _, id := range []string{"", "..", "a/b", "sp ace", strings.Repeat("x", 129)} {
			_, ep := pg.Append(id)
			_, ef := fs.Append(id)
			_, lp := pg.Load(id)
			_, lf := fs.Load(id)
			_, ip := pg.Init(id, session.Header{Cwd: "/w"})
			_, iff := fs.Init(id, session.Header{Cwd: "/w"})
			for _, pair := range [][2]error{{ep, ef}, {lp, lf}, {ip, iff}} {
				if pair[0] == nil || pair[1] == nil || pair[0].Error() != pair[1].Error() {
					t.Errorf("id %q: pg %v, jsonl %v; want the same error", id, pair[0], pair[1])
				}
			}
		}
		// A rejected call leaves nothing behind, not even the session.
		if _, err := pg.Load("s"); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("after rejected appends Load = %v, want ErrNotFound", err)
		}
	})

	t.Run("MissingSessionIsErrNotFound", func(t *testing.T) {
		pg, fs := open(t, e.url(t)), jsonl(t)
		_, ep := pg.Load("nope")
		_, ef := fs.Load("nope")
		if !errors.Is(ep, session.ErrNotFound) || ep.Error() != ef.Error() {
			t.Fatalf("Load = %v, want %v", ep, ef)
		}
	})

	// A session a newer build wrote is refused for good, with the file
	// store's text: a prompt on it fails at once instead of retrying.
	t.Run("NewerFormatIsPermanentAsInJSONL", func(t *testing.T) {
		st := open(t, e.url(t))
		mustAppend(t, st, "s", msgEntry("a", "", agent.RoleUser, "hi"))
		if _, err := st.Pool().Exec(context.Background(), `UPDATE agent_sessions SET version = 9 WHERE id = 's'`); err != nil {
			t.Fatal(err)
		}
		_, err := st.Load("s")
		if !errors.Is(err, session.ErrPermanent) || !strings.Contains(err.Error(), session.NewerFormat(9).Error()) {
			t.Fatalf("Load = %v, want %v (session.ErrPermanent)", err, session.NewerFormat(9))
		}
	})

	t.Run("InitKeepsTheFirstCwd", func(t *testing.T) {
		st := open(t, e.url(t))
		h1, err := st.Init("s", session.Header{Cwd: "/work/one"})
		if err != nil || h1.Cwd != "/work/one" || h1.ID != "s" || h1.Version != session.FormatVersion {
			t.Fatalf("Init = %+v, %v", h1, err)
		}
		h2, err := st.Init("s", session.Header{Cwd: "/work/two"})
		if err != nil || h2 != h1 {
			t.Fatalf("second Init = %+v, %v; want the first header %+v", h2, err, h1)
		}
		mustAppend(t, st, "s", msgEntry("a", "", agent.RoleUser, "hi"))
		if h := mustLoad(t, st, "s").Header; h != h1 {
			t.Fatalf("loaded header %+v, want %+v", h, h1)
		}
		// A session created by Append has no cwd, and Init keeps that.
		mustAppend(t, st, "t")
		if h, _ := st.Init("t", session.Header{Cwd: "/late"}); h.Cwd != "" {
			t.Fatalf("Init after Append: cwd %q, want empty", h.Cwd)
		}
	})

	t.Run("WorktreeKeptInTheHeaderAsByTheFileStore", func(t *testing.T) {
		wt := &session.Worktree{Dir: "/data/worktrees/w", Branch: "agent/w", Base: "0123abcd", Repo: "/src/repo"}
		for _, st := range []interface {
			Init(string, session.Header) (session.Header, error)
			Load(string) (*session.Session, error)
		}{open(t, e.url(t)), jsonl(t)} {
			h, err := st.Init("w", session.Header{Cwd: "/data/worktrees/w", Worktree: wt})
			if err != nil || h.Worktree == nil || *h.Worktree != *wt || h.Cwd != "/data/worktrees/w" {
				t.Fatalf("%T Init = %+v, %v; want the worktree %+v", st, h, err, wt)
			}
			sess, err := st.Load("w")
			if err != nil || sess.Header.Worktree == nil || *sess.Header.Worktree != *wt {
				t.Fatalf("%T Load header = %+v, %v; want the worktree", st, sess, err)
			}
			if h, _ := st.Init("plain", session.Header{Cwd: "/w"}); h.Worktree != nil {
				t.Fatalf("%T: a session without a worktree has %+v", st, h.Worktree)
			}
		}
	})

	// A sub-agent's session names its parent in the header (the task
	// tool); on a cluster the header must say so as the file store's does.
	t.Run("ParentSessionKeptInTheHeaderAsByTheFileStore", func(t *testing.T) {
		for _, st := range []interface {
			Init(string, session.Header) (session.Header, error)
			Load(string) (*session.Session, error)
		}{open(t, e.url(t)), jsonl(t)} {
			h, err := st.Init("child", session.Header{Cwd: "/w", ParentSession: "parent-1"})
			if err != nil || h.ParentSession != "parent-1" {
				t.Fatalf("%T Init = %+v, %v; want parentSession parent-1", st, h, err)
			}
			// A later Init of the session (its next prompt) keeps the header.
			if h, err := st.Init("child", session.Header{Cwd: "/w"}); err != nil || h.ParentSession != "parent-1" {
				t.Fatalf("%T second Init = %+v, %v; want the first parentSession kept", st, h, err)
			}
			sess, err := st.Load("child")
			if err != nil || sess.Header.ParentSession != "parent-1" {
				t.Fatalf("%T Load header = %+v, %v; want parentSession parent-1", st, sess, err)
			}
			if h, _ := st.Init("top", session.Header{Cwd: "/w"}); h.ParentSession != "" {
				t.Fatalf("%T: a top-level session has parent %q", st, h.ParentSession)
			}
		}
	})

	// Sessions written before the parent column existed read back as
	// top-level sessions once the schema is migrated.
	t.Run("MigrationKeepsOlderSessionsWithoutParent", func(t *testing.T) {
		url := e.url(t)
		st := open(t, url)
		ctx := context.Background()
		mustAppend(t, st, "old", msgEntry("a", "", agent.RoleUser, "hi"))
		// Take the database back to schema 4, as an older build left it.
		if _, err := st.Pool().Exec(ctx, `ALTER TABLE agent_sessions DROP COLUMN parent_session;
			DROP TABLE agent_rate_windows;
			DELETE FROM agent_schema_migrations WHERE version > 4`); err != nil {
			t.Fatal(err)
		}
		st2 := open(t, url)
		sess := mustLoad(t, st2, "old")
		if sess.Header.ParentSession != "" || ids(sess.Entries) != "a" {
			t.Fatalf("old session after the migration = %+v %s, want no parent and its entry", sess.Header, ids(sess.Entries))
		}
		if h, err := st2.Init("new", session.Header{ParentSession: "old"}); err != nil || h.ParentSession != "old" {
			t.Fatalf("Init after the migration = %+v, %v", h, err)
		}
	})

	t.Run("BadStoredRowSkippedWithWarning", func(t *testing.T) {
		st := open(t, e.url(t))
		mustAppend(t, st, "s", msgEntry("a", "", agent.RoleUser, "hi"))
		ctx := context.Background()
		for _, j := range []string{`{"type":"message","id":"nomsg"}`, `[1,2]`, `{"type":"message","id":""}`} {
			if _, err := st.Pool().Exec(ctx, `INSERT INTO agent_session_entries (session_id, entry_id, entry) VALUES ('s', md5($1), $1::json)`, j); err != nil {
				t.Fatal(err)
			}
		}
		mustAppend(t, st, "s", msgEntry("b", "a", agent.RoleAssistant, "hello"))
		s := mustLoad(t, st, "s")
		if got := ids(s.Entries); got != "a,b" {
			t.Fatalf("entries = %s, want a,b", got)
		}
		if len(s.Warnings) != 3 || !strings.Contains(s.Warnings[0], "has no message, skipped") ||
			!strings.Contains(s.Warnings[1], "not an entry object") || !strings.Contains(s.Warnings[2], "no id") {
			t.Fatalf("warnings = %q", s.Warnings)
		}
	})

	t.Run("ListSortsIDs", func(t *testing.T) {
		st := open(t, e.url(t))
		for _, id := range []string{"b", "a-b", "a", "A"} {
			mustAppend(t, st, id)
		}
		got, err := st.List()
		if err != nil || strings.Join(got, " ") != "A a a-b b" {
			t.Fatalf("List = %q, %v; want [A a a-b b]", got, err)
		}
	})

	t.Run("OpenMigratesOnceWhenWorkersStartTogether", func(t *testing.T) {
		url := e.url(t)
		var wg sync.WaitGroup
		errs := make(chan error, 6)
		for range 6 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := pgstore.Open(context.Background(), url)
				if err == nil {
					st.Close()
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		st := open(t, url)
		var n, v int
		if err := st.Pool().QueryRow(context.Background(), `SELECT count(*), max(version) FROM agent_schema_migrations`).Scan(&n, &v); err != nil {
			t.Fatal(err)
		}
		if n != pgstore.SchemaVersion || v != pgstore.SchemaVersion {
			t.Fatalf("migrations recorded %d (max %d), want %d", n, v, pgstore.SchemaVersion)
		}
	})

	t.Run("OpenRefusesNewerSchema", func(t *testing.T) {
		url := e.url(t)
		st := open(t, url)
		if _, err := st.Pool().Exec(context.Background(), `INSERT INTO agent_schema_migrations (version) VALUES (999)`); err != nil {
			t.Fatal(err)
		}
		_, err := pgstore.Open(context.Background(), url)
		if err == nil || !strings.Contains(err.Error(), "newer than this build") {
			t.Fatalf("Open = %v, want a newer-schema error", err)
		}
	})

	t.Run("OpenErrorHidesPassword", func(t *testing.T) {
		_, err := pgstore.OpenWithoutRetries(context.Background(), "postgres://u:s3cret@127.0.0.1:1/db?connect_timeout=1")
		if err == nil || strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "127.0.0.1:1/db") {
			t.Fatalf("Open = %v, want an error naming 127.0.0.1:1/db without the password", err)
		}
		_, err = pgstore.Open(context.Background(), "postgres://u:s3cret@host:notaport/db")
		if err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("Open = %v, want a parse error without the password", err)
		}
	})
}

// A PostgreSQL restart while a worker runs costs no write: calls during
// the outage wait for the server (RetryFor) and then succeed.
func TestStore_SurvivesPostgresRestart(t *testing.T) {
	srv := pgtest.Start(t, pgtest.Options{})
	st := open(t, srv.CreateDatabase(t, "sessions"))
	mustAppend(t, st, "s", msgEntry("a", "", agent.RoleUser, "before"))
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	restarted := make(chan error, 1)
	go func() {
		time.Sleep(1500 * time.Millisecond)
		restarted <- srv.Start()
	}()
	start := time.Now()
	if n := mustAppend(t, st, "s", msgEntry("b", "a", agent.RoleAssistant, "during")); n != 1 {
		t.Fatalf("written = %d, want 1", n)
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("Append returned after %s, before the server was back", waited)
	}
	if got := ids(mustLoad(t, st, "s").Entries); got != "a,b" {
		t.Fatalf("entries = %s, want a,b", got)
	}

	// Without retries an outage is an error naming the operation.
	quick, err := pgstore.OpenWithoutRetries(context.Background(), srv.URL("sessions"))
	if err != nil {
		t.Fatal(err)
	}
	defer quick.Close()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	_, err = quick.Load("s")
	if err == nil || !strings.HasPrefix(err.Error(), `load session "s": `) {
		t.Fatalf("Load while down = %v, want an error", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
}
