package app

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/internal/pgstore"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
)

// openTimeout bounds connecting to (and migrating) the session database.
const openTimeout = 30 * time.Second

// OpenSessionStore opens the session store of session.store: JSONL files
// under <dataDir>/sessions (one machine, or a filesystem all workers
// share with working flock), or the PostgreSQL database of
// session.postgresUrl (any number of machines). The postgres store's
// connections live as long as the process.
func OpenSessionStore(s settings.Settings) (session.Backend, error) {
	switch s.Session.Store {
	case settings.SessionStorePostgres:
		ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
		defer cancel()
		st, err := pgstore.Open(ctx, s.Session.PostgresURL, pgstore.Options{})
		if err != nil {
			return nil, err
		}
		return st, nil
	case settings.SessionStoreJSONL, "":
		st, err := session.Open(filepath.Join(s.DataDir, "sessions"))
		if err != nil {
			return nil, fmt.Errorf("open session store: %w", err)
		}
		return st, nil
	default:
		return nil, fmt.Errorf("open session store: unknown session.store %q (want %s or %s)",
			s.Session.Store, settings.SessionStoreJSONL, settings.SessionStorePostgres)
	}
}

// rateWindowsOf is where a worker keeps the rate-limit windows of
// coordinated backoff (SPEC 18.1): with sessions in PostgreSQL, in that
// database, shared by every worker of the cluster; otherwise beside the
// credentials in auth.json, shared by the workers of the data directory.
func rateWindowsOf(store session.Backend, creds *Credentials) activities.RateWindows {
	if pg, ok := store.(*pgstore.Store); ok {
		return pgWindows{pg.Windows(pgstore.WindowOptions{})}
	}
	return creds
}

// pgWindows is pgstore.Windows as activities.RateWindows.
type pgWindows struct{ *pgstore.Windows }

// Admit is pgstore.Windows.Admit with the activities' Admission.
func (w pgWindows) Admit(key, holder string, lease time.Duration) (activities.Admission, error) {
	a, err := w.Windows.Admit(key, holder, lease)
	return activities.Admission{Wait: a.Wait, Probe: a.Probe, Probing: a.Probing}, err
}

var _ activities.RateWindows = pgWindows{}
