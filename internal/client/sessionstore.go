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

// OpenSessionStore opens the session store of session.store (the
// settings allow jsonl and postgres): JSONL files under <dataDir>/sessions
// (one machine, or a filesystem all workers share with working flock), or
// the PostgreSQL database of session.postgresUrl (any number of machines).
// The postgres store's connections live as long as the process.
func OpenSessionStore(s settings.Settings) (session.Backend, error) {
	if s.Session.Store == settings.SessionStorePostgres {
		ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
		defer cancel()
		st, err := pgstore.Open(ctx, s.Session.PostgresURL)
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	st, err := session.Open(filepath.Join(s.DataDir, "sessions"))
	if err != nil {
		return nil, fmt.Errorf("open session store: %w", err)
	}
	return st, nil
}
