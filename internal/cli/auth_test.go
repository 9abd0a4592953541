package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
