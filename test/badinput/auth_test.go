package badinput

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/settings"
)

// A valid auth.json with one credential, as `starter auth add` writes it.
const authJSON = `{"version":1,"credentials":[{"id":"k1","provider":"openai","kind":"api_key","secret":"sk-test-0123456789abcdef"}]}`

// issue 7: an auth.json that group or others can read (its secrets may
// already have leaked), or that is not a usable file, is refused with one
// line naming the file and the fix; `starter auth` exits 2, the worker
// does not start, and the file is left as it was. The secret never
// appears in the error.
func TestAuth_BadAuthFileRefusedWithOneLine(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, path string)
		args  []string
		want  []string
	}{
		{"group- and world-readable (0644)", writeAuth(authJSON, 0o644), []string{"auth", "list"}, []string{"has mode 0644", "run chmod 600"}},
		{"group-readable (0640)", writeAuth(authJSON, 0o640), []string{"auth", "list", "--json"}, []string{"has mode 0640", "run chmod 600"}},
		{"world-readable only (0604)", writeAuth(authJSON, 0o604), []string{"auth", "remove", "k1"}, []string{"has mode 0604"}},
		{"world-writable (0666)", writeAuth(authJSON, 0o666), []string{"auth", "add", "openai", "--from-env", "K"}, []string{"has mode 0666"}},
		{"group-writable (0620)", writeAuth(authJSON, 0o620), []string{"auth", "list"}, []string{"has mode 0620"}},
		{"a directory", func(t *testing.T, path string) {
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
		}, []string{"auth", "list"}, []string{"not a regular file"}},
		{"a symlink to a private file", func(t *testing.T, path string) {
			target := filepath.Join(t.TempDir(), "real.json")
			writeAuth(authJSON, 0o600)(t, target)
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
		}, []string{"auth", "list"}, []string{"not a regular file"}},
		{"not JSON", writeAuth("sk-test-0123456789abcdef\n", 0o600), []string{"auth", "list"}, []string{"not valid JSON"}},
		{"a newer format", writeAuth(`{"version":7}`, 0o600), []string{"auth", "list"}, []string{"version 7 is newer"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			path := filepath.Join(home, "auth.json")
			tc.setup(t, path)
			before := snapshot(path)
			env := map[string]string{"DURABLE_AGENT_HOME": home, "TEMPORAL_ADDRESS": closedAddress(t), "K": "sk-test-from-env-0123456789"}
			code, stderr := starter(t, env, tc.args...)
			checkOneLineError(t, code, stderr, append([]string{path}, tc.want...)...)
			if strings.Contains(stderr, "sk-test-") {
				t.Errorf("the error shows a secret: %q", stderr)
			}
			// The worker refuses to start on the same file.
			s := settings.Defaults()
			s.DataDir = home
			if _, err := app.NewActivities(s); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.want[0]) {
				t.Errorf("worker start: %v; want an error naming %s and %q", err, path, tc.want[0])
			}
			if after := snapshot(path); !bytes.Equal(after, before) {
				t.Errorf("auth.json changed: %q -> %q", before, after)
			}
		})
	}
}

func writeAuth(content string, mode os.FileMode) func(t *testing.T, path string) {
	return func(t *testing.T, path string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil { // not subject to the umask
			t.Fatal(err)
		}
	}
}

// snapshot is a file's mode and content (or a marker for a directory or
// a link), to tell that nothing touched it.
func snapshot(path string) []byte {
	fi, err := os.Lstat(path)
	if err != nil {
		return []byte(err.Error())
	}
	b, _ := os.ReadFile(path)
	return append([]byte(fi.Mode().String()+"\n"), b...)
}
