package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/internal/pgstore"
	"github.com/durableagent/durableagent/internal/pgtest"
)

// starter auth add|list|remove: secrets come from stdin or a variable,
// the file is 0600, list shows ids and state but never a secret.
func TestAuth_AddListRemove(t *testing.T) {
	home := t.TempDir()
	const secret1, secret2 = "sk-ant-api03-cli-secret-0123456789", "sk-proj-cli-secret-abcdefghijkl"

	code, out, stderr := runIn(t, home, secret1+"\n", nil, "auth", "add", "anthropic")
	if code != ExitOK || !strings.Contains(out, "added credential anthropic-1") {
		t.Fatalf("add: exit %d out %q err %q", code, out, stderr)
	}
	code, _, stderr = runIn(t, home, "", map[string]string{"MY_KEY": secret2}, "auth", "add", "openai", "--id", "team", "--from-env", "MY_KEY")
	if code != ExitOK {
		t.Fatalf("add --from-env: exit %d err %q", code, stderr)
	}
	info, err := os.Stat(filepath.Join(home, "auth.json"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("auth.json: %v, mode %v; want 0600", err, info.Mode())
	}

	code, out, stderr = runIn(t, home, "", nil, "auth", "list")
	if code != ExitOK || !strings.Contains(out, "anthropic-1") || !strings.Contains(out, "team") || !strings.Contains(out, "ok") {
		t.Fatalf("list: exit %d out %q err %q", code, out, stderr)
	}
	code, jsonOut, _ := runIn(t, home, "", nil, "auth", "list", "--json")
	if code != ExitOK || strings.Count(jsonOut, "\n") != 2 {
		t.Fatalf("list --json: exit %d out %q", code, jsonOut)
	}
	var e struct {
		ID, Provider, Kind string
	}
	if err := json.Unmarshal([]byte(strings.SplitN(jsonOut, "\n", 2)[0]), &e); err != nil || e.ID == "" || e.Kind != "api_key" {
		t.Fatalf("list --json line: %+v %v", e, err)
	}
	for _, o := range []string{out, jsonOut} {
		if strings.Contains(o, "cli-secret") {
			t.Fatalf("list prints a secret: %q", o)
		}
	}

	if code, out, _ = runIn(t, home, "", nil, "auth", "remove", "team"); code != ExitOK || !strings.Contains(out, "removed credential team") {
		t.Fatalf("remove: exit %d out %q", code, out)
	}
	if _, out, _ = runIn(t, home, "", nil, "auth", "list"); strings.Contains(out, "team") {
		t.Fatalf("removed credential still listed: %q", out)
	}
}

// The environment key shows up as the implicit credential env:<provider>.
func TestAuth_ListShowsEnvironmentCredential(t *testing.T) {
	code, out, _ := runIn(t, t.TempDir(), "", map[string]string{"OPENAI_API_KEY": "sk-env-0123456789abcdef"}, "auth", "list")
	if code != ExitOK || !strings.Contains(out, "env:openai (environment)") || strings.Contains(out, "sk-env") {
		t.Fatalf("list: exit %d out %q", code, out)
	}
}

// Usage errors are one line with exit 2.
func TestAuth_Errors(t *testing.T) {
	home := t.TempDir()
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"no subcommand", "", []string{"auth"}, "usage: starter auth"},
		{"unknown subcommand", "", []string{"auth", "show"}, `unknown subcommand "show"`},
		{"unknown provider", "x\n", []string{"auth", "add", "mistral"}, `unknown provider "mistral"`},
		{"no secret", "", []string{"auth", "add", "openai"}, "no secret on stdin"},
		{"unset variable", "", []string{"auth", "add", "openai", "--from-env", "NOPE"}, "NOPE is not set"},
		{"bad kind", "x\n", []string{"auth", "add", "openai", "--kind", "password"}, `kind "password"`},
		{"remove missing", "", []string{"auth", "remove", "ghost"}, `no credential "ghost"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runIn(t, home, tc.stdin, nil, tc.args...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d stderr %q, want exit 2 naming %q", code, stderr, tc.want)
			}
		})
	}
	// A world-readable store is refused with the fix in the message.
	code, _, _ := runIn(t, home, "sk-x-0123456789\n", nil, "auth", "add", "openai")
	if code != ExitOK {
		t.Fatal("add failed")
	}
	if err := os.Chmod(filepath.Join(home, "auth.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runIn(t, home, "", nil, "auth", "list")
	if code != ExitUsage || !strings.Contains(stderr, "chmod 600") {
		t.Fatalf("insecure store: exit %d stderr %q", code, stderr)
	}
}

// SPEC 18.1: with sessions in PostgreSQL the workers keep their
// rate-limit windows there, so `auth list` shows those (as
// rateLimitedUntil, and in the STATE column), a window of a credential
// another host holds as an entry of its own, and not the windows left in
// auth.json, which those workers do not use.
func TestAuth_ListShowsPostgresWindows(t *testing.T) {
	url := pgtest.Start(t, pgtest.Options{}).CreateDatabase(t, "sessions")
	home := t.TempDir()
	for _, id := range []string{"work", "spare"} {
		if code, _, stderr := runIn(t, home, "sk-ant-"+id+"-0123456789\n", nil, "auth", "add", "anthropic", "--id", id); code != ExitOK {
			t.Fatalf("add %s: exit %d %s", id, code, stderr)
		}
	}
	f, err := auth.OpenFile(filepath.Join(home, "auth.json"), auth.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.RateLimited(auth.WindowKey("anthropic", "spare"), 3_600_000); err != nil {
		t.Fatal(err)
	}
	// A worker of the cluster met the limits.
	st, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := st.Windows()
	for key, ms := range map[string]int64{auth.WindowKey("anthropic", "work"): 600_000, auth.WindowKey("openai", "other-host"): 300_000} {
		if err := w.RateLimited(key, ms); err != nil {
			t.Fatal(err)
		}
	}

	pg := map[string]string{"DURABLE_AGENT_SESSION_STORE": "postgres", "DURABLE_AGENT_SESSION_POSTGRESURL": url}
	code, out, stderr := runIn(t, home, "", pg, "auth", "list", "--json")
	if code != ExitOK {
		t.Fatalf("list --json: exit %d %s", code, stderr)
	}
	got := map[string]auth.Entry{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e auth.Entry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("list --json line %q: %v", line, err)
		}
		got[e.ID] = e
	}
	if until := time.Until(got["work"].RateLimitedUntil); until < 9*time.Minute || until > 11*time.Minute {
		t.Fatalf("work's rateLimitedUntil in %v, want the cluster's 10 minutes (%s)", until, out)
	}
	if !got["spare"].RateLimitedUntil.IsZero() {
		t.Fatalf("spare shows auth.json's window, which the cluster does not use: %s", out)
	}
	if o := got["other-host"]; !o.WindowOnly || o.Provider != "openai" || time.Until(o.RateLimitedUntil) < 4*time.Minute {
		t.Fatalf("other host's credential = %+v, want a window-only entry for 5 minutes (%s)", o, out)
	}

	// The plain listing says the same in its STATE column; the flags
	// name the store as well as the environment does.
	code, out, stderr = runIn(t, home, "", nil, "auth", "list", "--session.store", "postgres", "--session.postgresUrl", url)
	if code != ExitOK {
		t.Fatalf("list: exit %d %s", code, stderr)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if fields := strings.Fields(l); len(fields) > 0 {
			lines[fields[0]] = l
		}
	}
	if !strings.Contains(lines["work"], "rate-limited until") || strings.Contains(lines["spare"], "rate-limited") ||
		!strings.Contains(lines["other-host"], "(not in this auth.json)") || !strings.Contains(lines["other-host"], "rate-limited until") {
		t.Fatalf("list:\n%s", out)
	}
	// Without the postgres store, auth.json's windows are the workers'.
	if code, out, _ = runIn(t, home, "", nil, "auth", "list"); code != ExitOK || !strings.Contains(out, "spare") ||
		strings.Contains(out, "other-host") || !strings.Contains(strings.SplitN(out[strings.Index(out, "spare"):], "\n", 2)[0], "rate-limited until") {
		t.Fatalf("list with auth.json's windows:\n%s", out)
	}
}

// A database that does not answer is a one-line error naming it.
func TestAuth_ListPostgresUnreachable(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a connection to fail (skipped with -short)")
	}
	code, _, stderr := runIn(t, t.TempDir(), "", map[string]string{"DURABLE_AGENT_SESSION_STORE": "postgres",
		"DURABLE_AGENT_SESSION_POSTGRESURL": "postgres://nobody@127.0.0.1:1/sessions?connect_timeout=1"}, "auth", "list")
	if code == ExitOK || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "rate-limit windows") {
		t.Fatalf("exit %d, stderr %q; want a one-line error about the windows' store", code, stderr)
	}
}
