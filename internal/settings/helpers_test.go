package settings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// fakeEnv is the environment a test sets (t.Setenv), with HOME in the
// test's temp dir so the default data dir never touches the real one.
type fakeEnv map[string]string

func newEnv(t *testing.T, vars map[string]string) fakeEnv {
	t.Helper()
	e := fakeEnv{"HOME": t.TempDir()}
	for k, v := range vars {
		e[k] = v
	}
	setEnv(t, e)
	return e
}

// setEnv sets env, and empties (which counts as unset) the DURABLE_AGENT_
// variables an earlier call set that env lacks.
func setEnv(t *testing.T, env map[string]string) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, EnvPrefix) {
			t.Setenv(name, env[name])
		}
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
}

// load runs Load with the environment env set and parsed flags.
func load(t *testing.T, file string, env fakeEnv, args ...string) (Settings, error) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse flags %v: %v", args, err)
	}
	return Load(LoadOptions{File: file, Flags: fs})
}

// writeYAML writes content to a new settings file and returns its path.
func writeYAML(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "settings.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// loadEnv runs Load with the variables env (see setEnv).
func loadEnv(t *testing.T, env map[string]string) (Settings, error) {
	t.Helper()
	setEnv(t, env)
	return Load(LoadOptions{})
}
