//go:build linux

package app

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/durableagent/durableagent/internal/settings"
)

// Issue 20 item 4: every worker process (worker, worker --dev, the demo,
// worker-cluster) builds its activities with NewActivities, which makes
// the process non-dumpable, so other processes of its user cannot read
// its /proc/<pid>/environ; and the activities know the settings' secrets
// (the codec key file's text, the session database's password) to redact
// them from tool output.
// Spec 14.4.4.
func TestNewActivities_HardensTheWorkerAndKnowsTheSettingsSecrets(t *testing.T) {
	s := settings.Defaults()
	s.DataDir = t.TempDir()
	keyFile := filepath.Join(t.TempDir(), "codec.key")
	const key = "q0Vb1k2m3n4o5p6q7r8s9t0u1v2w3x4y5z6A7B8C9D0="
	if err := os.WriteFile(keyFile, []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Codec.KeyFile = keyFile
	s.Session.PostgresURL = "postgres://app:pg-Passw0rd-Secret@db:5432/app"
	acts, err := NewActivities(s)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || v != 0 {
		t.Fatalf("PR_GET_DUMPABLE = %d, %v after NewActivities: the worker's environment is readable by its user's other processes", v, err)
	}
	for _, want := range []string{key, "pg-Passw0rd-Secret", s.Session.PostgresURL} {
		if !slices.Contains(acts.Secrets, want) {
			t.Errorf("the activities do not know the secret %q of the settings: %q", want, acts.Secrets)
		}
	}
	// A key=value connection string's password is known on its own too.
	s.Session.PostgresURL = "host=db user=app password='pg kv Secret' dbname=app"
	if got := SettingsSecrets(s); !slices.Contains(got, "pg kv Secret") {
		t.Errorf("SettingsSecrets with a key=value postgresUrl = %q, want its password among them", got)
	}
}
