package app

import (
	"context"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/internal/pgstore"
	"github.com/durableagent/durableagent/internal/pgtest"
	"github.com/durableagent/durableagent/internal/settings"
)

// SPEC 18.1, where windows live: a worker whose sessions are in
// PostgreSQL holds for the windows other workers of the database opened
// (none of them in its auth.json); a worker with JSONL sessions keeps
// them in auth.json.
func TestNewActivities_RateWindowsFollowTheSessionStore(t *testing.T) {
	key := auth.WindowKey("anthropic", "work")
	authWindow := func(t *testing.T, s settings.Settings) auth.Admission {
		t.Helper()
		f, err := auth.OpenFile(AuthPath(s), auth.FileOptions{})
		if err != nil {
			t.Fatal(err)
		}
		a, err := f.Admit(key, "auth-json-reader", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}

	t.Run("postgres", func(t *testing.T) {
		srv := pgtest.Start(t, pgtest.Options{})
		s := settings.Defaults()
		s.DataDir = t.TempDir()
		s.Session.Store = settings.SessionStorePostgres
		s.Session.PostgresURL = srv.CreateDatabase(t, "sessions")
		acts, err := NewActivities(s)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(acts.Sessions.(*pgstore.Store).Close)
		// Another worker of the cluster meets the rate limit.
		other, err := pgstore.Open(context.Background(), s.Session.PostgresURL)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if err := other.Windows().RateLimited(key, 60_000); err != nil {
			t.Fatal(err)
		}
		if a, err := acts.Windows.Admit(key, "job", time.Second); err != nil || a.Wait <= 50*time.Second {
			t.Fatalf("this worker's Admit = %+v, %v; want hold for the other worker's minute", a, err)
		}
		// This worker's own rate limit is not written to its auth.json.
		if err := acts.Windows.RateLimited(auth.WindowKey("anthropic", "mine"), 60_000); err != nil {
			t.Fatal(err)
		}
		if a := authWindow(t, s); a != (auth.Admission{}) {
			t.Fatalf("auth.json holds a window: %+v", a)
		}
	})

	t.Run("jsonl", func(t *testing.T) {
		s := settings.Defaults()
		s.DataDir = t.TempDir()
		acts, err := NewActivities(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := acts.Windows.RateLimited(key, 60_000); err != nil {
			t.Fatal(err)
		}
		if a := authWindow(t, s); a.Wait <= 50*time.Second {
			t.Fatalf("auth.json's window: Admit = %+v, want hold for the minute", a)
		}
	})

	t.Run("off", func(t *testing.T) {
		s := settings.Defaults()
		s.DataDir = t.TempDir()
		s.Model.CoordinatedBackoff = false
		acts, err := NewActivities(s)
		if err != nil {
			t.Fatal(err)
		}
		if acts.Windows != nil {
			t.Fatalf("model.coordinatedBackoff false: Windows = %T, want none", acts.Windows)
		}
	})
}
