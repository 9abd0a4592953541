package app

import (
	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/internal/pgstore"
	"github.com/durableagent/durableagent/internal/session"
)

// rateWindowsOf is where a worker keeps the rate-limit windows of
// coordinated backoff (SPEC 18.1): with sessions in PostgreSQL, in that
// database, shared by every worker of the cluster; otherwise beside the
// credentials in auth.json, shared by the workers of the data directory.
func rateWindowsOf(store session.Backend, creds *Credentials) activities.RateWindows {
	if pg, ok := store.(*pgstore.Store); ok {
		return pg.Windows()
	}
	return creds
}
