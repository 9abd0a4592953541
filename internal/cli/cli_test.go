package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/testserver"
)

// run calls Main with an isolated environment: a temp data dir and
// Temporal pointed at a closed local port.
func run(t *testing.T, vars map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	home := t.TempDir()
	env := map[string]string{
		"DURABLE_AGENT_HOME": home,
		"TEMPORAL_ADDRESS":   "127.0.0.1:1", // nothing listens on port 1
	}
	for k, v := range vars {
		env[k] = v
	}
	testserver.SetEnv(t, env)
	var out, errb bytes.Buffer
	code = Main(args, Env{
		Stdout: &out, Stderr: &errb,
	})
	return code, out.String(), errb.String()
}

// Errors are one clear line on stderr with exit code 2 (issue 2 item 6);
// a mistyped command or flag names the one meant (issue 39 item 6).
func TestCLI_ErrorsAreOneLineExitTwo(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no command", nil, "usage: starter"},
		{"unknown command", []string{"promt"}, `unknown command "promt" (did you mean prompt?)`},
		{"unknown command, none close", []string{"xyzzy"}, `unknown command "xyzzy" (run 'starter help')`},
		{"prompt without message", []string{"prompt"}, "missing MESSAGE"},
		{"bad session id", []string{"state", "--session", "../etc"}, "--session: invalid session id"},
		{"bad fault script", []string{"prompt", "--fault", "hang:soon", "hi"}, "bad hang duration"},
		{"unreachable temporal", []string{"state", "--session", "s1"}, "cannot reach Temporal at 127.0.0.1:1"},
		{"abort-retry unreachable", []string{"abort-retry", "--session", "s1"}, "cannot reach Temporal at 127.0.0.1:1"},
		{"set-auto-retry bad value", []string{"set-auto-retry", "maybe"}, `argument "maybe" is not on or off`},
		{"set-auto-retry no value", []string{"set-auto-retry"}, "want exactly one argument"},
		{"session set not a session setting", []string{"session", "set", "retry.maxRetries", "3"}, `"retry.maxRetries" is not a session setting`},
		{"session set without value", []string{"session", "set", "tools.enabled"}, "want exactly two arguments: KEY VALUE"},
		{"unknown flag", []string{"state", "--sesion", "x"}, "unknown flag: --sesion (did you mean --session?)"},
		{"unknown setting flag", []string{"prompt", "--retry.enabld=false", "x"}, "unknown flag: --retry.enabld (did you mean --retry.enabled?)"},
		{"unknown flag of a command", []string{"sessions", "--faild"}, "unknown flag: --faild (did you mean --failed?)"},
		{"bad setting value", []string{"state", "--retry.maxRetries", "-1"}, "retry.maxRetries"},
		{"unexpected argument", []string{"abort", "now"}, `unexpected argument "now"`},
		{"fork --as outside the data dir", []string{"fork", "--session", "s1", "--at", "1", "--as", "../../tmp/x"}, "--as: invalid session id"},
		{"missing workspace, Temporal on loopback", []string{"prompt", "--workspace", "/nonexistent-i39", "hi"}, "--workspace /nonexistent-i39 is not a directory on this machine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, nil, tc.args...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d; stderr %q", code, ExitUsage, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Fatalf("stderr %q does not name the problem (%q)", stderr, tc.want)
			}
			if tc.args != nil && strings.Count(strings.TrimSpace(stderr), "\n") > 2 {
				t.Fatalf("stderr is not a short error: %q", stderr)
			}
		})
	}
}

// SPEC 8: set_auto_retry writes retry.enabled to the settings file (and
// tells a running prompt when Temporal is reachable).
func TestCLI_SetAutoRetryPersistsSetting(t *testing.T) {
	home := t.TempDir()
	vars := map[string]string{"DURABLE_AGENT_HOME": home}
	code, out, stderr := run(t, vars, "set-auto-retry", "off")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(home, "settings.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "enabled: false") {
		t.Fatalf("settings file does not persist retry.enabled=false:\n%s", b)
	}
	if !strings.Contains(out, "retry.enabled=false") || !strings.Contains(out, "no running prompt") {
		t.Fatalf("output %q", out)
	}
	code, out, _ = run(t, vars, "settings", "--json")
	if code != ExitOK || !strings.Contains(out, `"retry":{"enabled":false`) {
		t.Fatalf("settings after set-auto-retry off: %s", out)
	}
}
