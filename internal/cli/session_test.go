package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/pgstore"
	"github.com/durableagent/durableagent/internal/pgtest"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/sysprompt"
)

// sampleSession writes session id (workspace /work/project, on host if
// one is given) to the JSONL store under dir and returns it.
func sampleSession(t *testing.T, dir, id string, host ...string) *session.Session {
	t.Helper()
	st, err := session.Open(filepath.Join(dir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	msg := func(id, parent string, role agent.Role, text string) session.Entry {
		m := agent.TextMessage(role, text)
		return session.Entry{Type: session.TypeMessage, ID: id, ParentID: parent, Timestamp: ts, Message: &m}
	}
	if _, err := st.Init(id, session.Header{Cwd: "/work/project", Host: strings.Join(host, "")}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(id, msg("u1", "", agent.RoleUser, "hi <there> & \"you\""), msg("a1", "u1", agent.RoleAssistant, "hello"),
		session.Entry{Type: session.TypeCompaction, ID: "c1", ParentID: "a1", Timestamp: ts, Summary: "greeting", FirstKeptEntryID: "a1", TokensBefore: 9},
		msg("u2", "c1", agent.RoleUser, "more")); err != nil {
		t.Fatal(err)
	}
	sess, err := st.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

func loadJSONL(t *testing.T, dir, id string) *session.Session {
	t.Helper()
	st, err := session.Open(filepath.Join(dir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	sess, err := st.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// An export is the session file; importing it elsewhere gives the same
// session, and importing it again writes nothing.
func TestSession_ExportImportRoundTrip(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	want := sampleSession(t, src, "s1")
	file := filepath.Join(t.TempDir(), "s1.jsonl")
	code, _, stderr := run(t, map[string]string{"DURABLE_AGENT_HOME": src}, "session", "export", "--store", "jsonl", "--session", "s1", "--out", file)
	if code != ExitOK || !strings.Contains(stderr, "exported session s1 from jsonl: 4 entries") {
		t.Fatalf("export: exit %d, %s", code, stderr)
	}
	b, _ := os.ReadFile(file)
	if lines := strings.Count(string(b), "\n"); lines != 5 || !strings.HasPrefix(string(b), `{"type":"session"`) {
		t.Fatalf("export is not a session file (header + 4 lines):\n%s", b)
	}
	for i, wantOut := range []string{"4 entries written, 0 already there", "0 entries written, 4 already there"} {
		code, out, stderr := run(t, map[string]string{"DURABLE_AGENT_HOME": dst}, "session", "import", file)
		if code != ExitOK || !strings.Contains(out, "imported session s1 into jsonl: "+wantOut) {
			t.Fatalf("import %d: exit %d, %s%s", i, code, out, stderr)
		}
	}
	got := loadJSONL(t, dst, "s1")
	if !reflect.DeepEqual(got.Entries, want.Entries) || got.Header.Cwd != "/work/project" {
		t.Fatalf("imported %+v\nwant %+v", got, want)
	}
	// --session renames on import.
	if code, out, stderr := run(t, map[string]string{"DURABLE_AGENT_HOME": dst}, "session", "import", "--session", "s2", file); code != ExitOK || !strings.Contains(out, "session s2") {
		t.Fatalf("import as s2: %d %s%s", code, out, stderr)
	}
	if code, out, _ := run(t, map[string]string{"DURABLE_AGENT_HOME": dst}, "session", "list", "--store", "jsonl"); code != ExitOK || out != "s1\ns2\n" {
		t.Fatalf("list: %d %q", code, out)
	}
}

func TestSession_ErrorsAreOneLine(t *testing.T) {
	notSession := filepath.Join(t.TempDir(), "x.jsonl")
	_ = os.WriteFile(notSession, []byte(`{"hello":1}`+"\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"session"}, "want a subcommand"},
		{[]string{"session", "move"}, `unknown subcommand "move"`},
		{[]string{"session", "export", "--store", "jsonl", "--session", "nope"}, `load session "nope": session not found`},
		{[]string{"session", "export", "--store", "sqlite"}, `unknown session.store "sqlite" (want jsonl or postgres)`},
		{[]string{"session", "import"}, "want exactly one argument"},
		{[]string{"session", "import", notSession}, "line 1 is not a session header"},
		{[]string{"session", "copy", "--session", "s1"}, "--from and --to are required"},
		{[]string{"session", "copy", "--from", "jsonl", "--to", "postgres"}, "give either --session ID or --all"},
		{[]string{"session", "copy", "--all", "--from", "jsonl", "--to", "jsonl"}, "both jsonl"},
		{[]string{"session", "delete"}, "--session ID is required"},
		{[]string{"session", "delete", "--session", "s1", "--store", "jsonl"}, "--store does not apply"},
		{[]string{"session", "delete", "--session", "s1", "extra"}, `unexpected argument "extra"`},
		{[]string{"session", "list", "--store", "jsonl", "extra"}, `unexpected argument "extra"`},
	} {
		code, _, stderr := run(t, nil, tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}

// Sessions move from a machine's JSONL files into PostgreSQL and back,
// unchanged; a repeated copy writes nothing.
func TestSession_CopyBetweenJSONLAndPostgres(t *testing.T) {
	pg := pgtest.Start(t, pgtest.Options{})
	url := pg.CreateDatabase(t, "sessions")
	src, back := t.TempDir(), t.TempDir()
	want := map[string]*session.Session{"a": sampleSession(t, src, "a"), "b": sampleSession(t, src, "b")}
	vars := func(home string) map[string]string {
		return map[string]string{"DURABLE_AGENT_HOME": home, "DURABLE_AGENT_SESSION_POSTGRESURL": url}
	}
	// Session a's system prompt text is kept beside it (spec 7.6).
	jsonl, err := session.Open(filepath.Join(src, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	if err := jsonl.PutAside("a", session.SystemPromptKey, []byte("You are a coding agent.")); err != nil {
		t.Fatal(err)
	}
	for i, wantOut := range []string{"4 entries written, 0 already there", "0 entries written, 4 already there"} {
		code, out, stderr := run(t, vars(src), "session", "copy", "--all", "--from", "jsonl", "--to", "postgres")
		if code != ExitOK || strings.Count(out, wantOut) != 2 {
			t.Fatalf("copy %d: exit %d\n%s%s", i, code, out, stderr)
		}
	}
	st, err := pgstore.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for id, w := range want {
		got, err := st.Load(id)
		if err != nil || !reflect.DeepEqual(got.Entries, w.Entries) || got.Header.Cwd != w.Header.Cwd {
			t.Fatalf("postgres %s = %+v, %v\nwant %+v", id, got, err, w)
		}
	}
	if text, err := st.Aside("a", session.SystemPromptKey); err != nil || string(text) != "You are a coding agent." {
		t.Fatalf("postgres kept system prompt of a: %q, %v", text, err)
	}
	code, out, stderr := run(t, vars(back), "session", "copy", "--session", "b", "--from", "postgres", "--to", "jsonl")
	if code != ExitOK || !strings.Contains(out, "copied session b from postgres to jsonl: 4 entries written") {
		t.Fatalf("copy back: exit %d\n%s%s", code, out, stderr)
	}
	if got := loadJSONL(t, back, "b"); !reflect.DeepEqual(got.Entries, want["b"].Entries) {
		t.Fatalf("back in jsonl: %+v", got.Entries)
	}
	// --store postgres lists the database itself (without --store, list
	// asks the workers).
	code, out, stderr = run(t, map[string]string{"DURABLE_AGENT_HOME": back, "DURABLE_AGENT_SESSION_STORE": "postgres",
		"DURABLE_AGENT_SESSION_POSTGRESURL": url}, "session", "list", "--store", "postgres")
	if code != ExitOK || out != "a\nb\n" {
		t.Fatalf("list postgres: exit %d, %q (want a and b)\n%s", code, out, stderr)
	}
}

// A session exported from JSONL imports into PostgreSQL, and exported
// from PostgreSQL imports into JSONL, unchanged: entries line for line,
// workspace and host; a repeated import writes nothing.
func TestSession_ExportImportThroughPostgres(t *testing.T) {
	pg := pgtest.Start(t, pgtest.Options{})
	url := pg.CreateDatabase(t, "sessions")
	src, back, files := t.TempDir(), t.TempDir(), t.TempDir()
	want := sampleSession(t, src, "s1", "host-a")
	vars := func(home string) map[string]string {
		return map[string]string{"DURABLE_AGENT_HOME": home, "DURABLE_AGENT_SESSION_POSTGRESURL": url}
	}
	same := func(where string, got *session.Session) {
		t.Helper()
		if !reflect.DeepEqual(got.Entries, want.Entries) || got.Header.Cwd != "/work/project" || got.Header.Host != "host-a" {
			t.Fatalf("%s: header %+v entries %+v\nwant cwd /work/project, host host-a, entries %+v", where, got.Header, got.Entries, want.Entries)
		}
	}

	fromJSONL := filepath.Join(files, "from-jsonl.jsonl")
	if code, _, stderr := run(t, vars(src), "session", "export", "--session", "s1", "--store", "jsonl", "--out", fromJSONL); code != ExitOK ||
		!strings.Contains(stderr, "exported session s1 from jsonl: 4 entries") {
		t.Fatalf("export from jsonl: exit %d, %s", code, stderr)
	}
	for i, wantOut := range []string{"4 entries written, 0 already there", "0 entries written, 4 already there"} {
		code, out, stderr := run(t, vars(t.TempDir()), "session", "import", "--store", "postgres", fromJSONL)
		if code != ExitOK || !strings.Contains(out, "imported session s1 into postgres: "+wantOut) {
			t.Fatalf("import into postgres %d: exit %d, %s%s", i, code, out, stderr)
		}
	}
	st, err := pgstore.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	got, err := st.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	same("in postgres", got)

	fromPG := filepath.Join(files, "from-postgres.jsonl")
	if code, _, stderr := run(t, vars(t.TempDir()), "session", "export", "--session", "s1", "--store", "postgres", "--out", fromPG); code != ExitOK ||
		!strings.Contains(stderr, "exported session s1 from postgres: 4 entries") {
		t.Fatalf("export from postgres: exit %d, %s", code, stderr)
	}
	a, _ := os.ReadFile(fromJSONL)
	b, _ := os.ReadFile(fromPG)
	// The headers differ in their creation time only; entries are the
	// same bytes.
	if la, lb := strings.SplitN(string(a), "\n", 2), strings.SplitN(string(b), "\n", 2); len(la) != 2 || len(lb) != 2 || la[1] != lb[1] {
		t.Fatalf("entries exported from postgres differ from the JSONL export:\n%s\n---\n%s", a, b)
	}
	if code, out, stderr := run(t, vars(back), "session", "import", "--store", "jsonl", fromPG); code != ExitOK ||
		!strings.Contains(out, "imported session s1 into jsonl: 4 entries written, 0 already there") {
		t.Fatalf("import into jsonl: exit %d, %s%s", code, out, stderr)
	}
	same("back in jsonl", loadJSONL(t, back, "s1"))
}

// Spec 7.6, issue 23: an export carries the session's kept system prompt
// text (in its header line; the session file never holds it) and an
// import keeps it again, so the imported session's model calls send the
// text its system_prompt record names; a text that does not match the
// record is refused in one line, and an export without one (an older
// starter's) imports with a warning that a new one will be built.
func TestSession_ExportImportKeepsSystemPrompt(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	sampleSession(t, src, "s1")
	const text = "You are a coding agent working in /work/project.\nProject rules: run go vet."
	st, err := session.Open(filepath.Join(src, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := session.SystemPromptEntry(session.SystemPromptRecord{Hash: sysprompt.Hash(text), Bytes: len(text), Sources: []string{"AGENTS.md"}}, "u2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append("s1", rec); err != nil {
		t.Fatal(err)
	}
	if err := st.PutAside("s1", session.SystemPromptKey, []byte(text)); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "s1.jsonl")
	if code, _, stderr := run(t, map[string]string{"DURABLE_AGENT_HOME": src}, "session", "export", "--store", "jsonl", "--session", "s1", "--out", file); code != ExitOK {
		t.Fatalf("export: exit %d, %s", code, stderr)
	}
	code, out, stderr := run(t, map[string]string{"DURABLE_AGENT_HOME": dst}, "session", "import", "--session", "s2", file)
	if code != ExitOK || !strings.Contains(out, "5 entries written") || stderr != "" {
		t.Fatalf("import: exit %d, %s%s", code, out, stderr)
	}
	dstStore, err := session.Open(filepath.Join(dst, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := dstStore.Aside("s2", session.SystemPromptKey); err != nil || string(got) != text {
		t.Fatalf("imported kept system prompt = %q, %v; want %q", got, err, text)
	}
	got := loadJSONL(t, dst, "s2")
	if r, ok := got.SystemPrompt(); !ok || r.Hash != sysprompt.Hash(text) {
		t.Fatalf("imported system_prompt record = %+v, %v", r, ok)
	}
	// The session file itself never holds the text; the export's header does.
	stored, _ := os.ReadFile(filepath.Join(dst, "sessions", "s2.jsonl"))
	if strings.Contains(string(stored), "Project rules") {
		t.Fatalf("the imported session file holds the system prompt text:\n%s", stored)
	}

	// An edited text is refused, naming the problem.
	b, _ := os.ReadFile(file)
	edited := filepath.Join(t.TempDir(), "edited.jsonl")
	if err := os.WriteFile(edited, []byte(strings.Replace(string(b), "run go vet", "skip the tests", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run(t, map[string]string{"DURABLE_AGENT_HOME": dst}, "session", "import", "--session", "s3", edited)
	if code == ExitOK || !strings.Contains(stderr, "systemPrompt does not match the session's system_prompt record") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Fatalf("import of an edited text: exit %d, %q", code, stderr)
	}

	// An export without the text (an older starter's) imports with a warning.
	old := filepath.Join(t.TempDir(), "old.jsonl")
	var w strings.Builder
	sess, err := st.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	if err := session.WriteExport(&w, sess, nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(old, []byte(w.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = run(t, map[string]string{"DURABLE_AGENT_HOME": dst}, "session", "import", "--session", "s4", old)
	if code != ExitOK || !strings.Contains(stderr, "no system prompt text") {
		t.Fatalf("import of an old export: exit %d, %q", code, stderr)
	}
	if got, _ := dstStore.Aside("s4", session.SystemPromptKey); got != nil {
		t.Fatalf("old export kept a system prompt: %q", got)
	}
}
