package settings

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// SPEC 8: set_auto_retry writes retry.enabled as a persisted setting; a
// following Load sees it and every other key keeps its value.
func TestSetAutoRetry_PersistsAndKeepsOtherKeys(t *testing.T) {
	cases := []struct {
		name    string
		initial string // "" : no file
		enabled bool
		// keep are lines that must survive (values and comments).
		keep []string
	}{
		{name: "creates a missing file", enabled: false},
		{name: "adds the key to an existing group",
			initial: "# my settings\nretry:\n  maxRetries: 7 # seven\ntemporal:\n  address: host:7233\n",
			enabled: false,
			keep:    []string{"# my settings", "maxRetries: 7 # seven", "address: host:7233"}},
		{name: "changes an existing value",
			initial: "retry:\n  enabled: false\n  baseDelayMs: 500\nmodel:\n  provider: openai\n",
			enabled: true,
			keep:    []string{"baseDelayMs: 500", "provider: openai"}},
		{name: "adds the group",
			initial: "scripted:\n  faults: [\"503 Service Unavailable\", ok]\n",
			enabled: false,
			keep:    []string{"503 Service Unavailable"}},
		{name: "flat dotted key stays flat",
			initial: "retry.enabled: true\nretry.maxRetries: 2\n",
			enabled: false,
			keep:    []string{"retry.maxRetries: 2"}},
		{name: "null group",
			initial: "retry:\ndev:\n  ui: false\n",
			enabled: false,
			keep:    []string{"ui: false"}},
		{name: "comments-only file",
			initial: "# nothing yet\n",
			enabled: false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			file := filepath.Join(dir, FileName)
			var before Settings
			env := newEnv(t, map[string]string{EnvHome: dir})
			if c.initial != "" {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, []byte(c.initial), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			before, err := load(t, "", env)
			if err != nil {
				t.Fatalf("load before: %v", err)
			}
			if err := SetBool(before.File(), "retry.enabled", c.enabled); err != nil {
				t.Fatalf("SetAutoRetry: %v", err)
			}
			after, err := load(t, "", env)
			if err != nil {
				t.Fatalf("load after: %v\nfile:\n%s", err, readString(t, file))
			}
			if after.Retry.Enabled != c.enabled {
				t.Errorf("retry.enabled = %v, want %v", after.Retry.Enabled, c.enabled)
			}
			// Everything else is unchanged.
			want := before
			want.Retry.Enabled = c.enabled
			if !reflect.DeepEqual(after, want) {
				t.Errorf("settings changed beyond retry.enabled:\n got %+v\nwant %+v", after, want)
			}
			text := readString(t, file)
			for _, k := range c.keep {
				if !strings.Contains(text, k) {
					t.Errorf("file lost %q:\n%s", k, text)
				}
			}
			if c.initial == "" {
				fi, err := os.Stat(file)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != 0o600 {
					t.Errorf("new file mode = %v, want 0600", fi.Mode().Perm())
				}
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Errorf("data dir holds %d entries, want only %s (temp file left behind?)", len(entries), FileName)
			}
		})
	}
}

func TestSetAutoRetry_TogglesBackAndForth(t *testing.T) {
	file := writeYAML(t, "retry:\n  maxRetries: 4\n")
	for _, enabled := range []bool{false, true, false} {
		if err := SetBool(file, "retry.enabled", enabled); err != nil {
			t.Fatal(err)
		}
		s, err := load(t, file, newEnv(t, nil))
		if err != nil {
			t.Fatal(err)
		}
		if s.Retry.Enabled != enabled || s.Retry.MaxRetries != 4 {
			t.Errorf("after SetBool(retry.enabled, %v): retry = %+v", enabled, s.Retry)
		}
	}
	if n := strings.Count(readString(t, file), "enabled"); n != 1 {
		t.Errorf("file has %d enabled keys, want 1:\n%s", n, readString(t, file))
	}
}

func TestSetAutoRetry_KeepsFileMode(t *testing.T) {
	file := writeYAML(t, "retry:\n  enabled: true\n")
	if err := os.Chmod(file, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := SetBool(file, "retry.enabled", false); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v, want 0640 kept", fi.Mode().Perm())
	}
}

// A file SetAutoRetry cannot understand is left exactly as it was.
func TestSetAutoRetry_RefusesUnparsableFile(t *testing.T) {
	cases := []struct{ name, content, want string }{
		{"bad YAML", "retry:\n  maxRetries: [\n", "bad YAML"},
		{"top level list", "- a\n- b\n", "not a mapping"},
		{"retry is a scalar", "retry: 5\n", "retry is not a mapping"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := writeYAML(t, c.content)
			err := SetBool(file, "retry.enabled", false)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), file) {
				t.Errorf("SetAutoRetry = %v, want an error naming %s and %q", err, file, c.want)
			}
			if got := readString(t, file); got != c.content {
				t.Errorf("file changed to %q", got)
			}
		})
	}
}

func readString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
