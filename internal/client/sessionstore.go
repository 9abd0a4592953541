package client

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

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
// connections live as long as the process. It is the one check of a
// kind the settings did not parse (the starter's --store, --from, --to).
func OpenSessionStore(s settings.Settings) (session.Backend, error) {
	switch s.Session.Store {
	case settings.SessionStoreJSONL, "":
	case settings.SessionStorePostgres:
		ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
		defer cancel()
		st, err := pgstore.Open(ctx, s.Session.PostgresURL)
		if err != nil {
			return nil, err
		}
		return st, nil
	default:
		return nil, fmt.Errorf("open session store: unknown session.store %q (want %s or %s)",
			s.Session.Store, settings.SessionStoreJSONL, settings.SessionStorePostgres)
	}
	st, err := session.Open(filepath.Join(s.DataDir, "sessions"))
	if err != nil {
		return nil, fmt.Errorf("open session store: %w", err)
	}
	return st, nil
}
