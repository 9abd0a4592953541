package settings

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/spf13/pflag"
)

// fakeEnv is an injected environment; HOME points into the test's temp dir
// so the default data dir never touches the real one.
type fakeEnv map[string]string

func (f fakeEnv) lookup(k string) (string, bool) { v, ok := f[k]; return v, ok }

func (f fakeEnv) environ() []string {
	var out []string
	for k, v := range f {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func newEnv(t *testing.T, vars map[string]string) fakeEnv {
	t.Helper()
	e := fakeEnv{"HOME": t.TempDir()}
	for k, v := range vars {
		e[k] = v
	}
	return e
}

// load runs Load with an injected environment and parsed flags.
func load(t *testing.T, file string, env fakeEnv, args ...string) (Settings, error) {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse flags %v: %v", args, err)
	}
	return Load(LoadOptions{File: file, Flags: fs, Env: env.lookup, Environ: env.environ})
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
