package app

import (
	"time"

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
		return pgWindows{pg.Windows()}
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
