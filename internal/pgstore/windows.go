package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/durableagent/durableagent/internal/auth"
)

// Windows keeps the rate-limit windows of provider credentials (SPEC
// 18.1) in the store's database, shared by every worker of a cluster.
//
// The rules are package auth's (auth.Windows, which this type embeds),
// applied to one row of agent_rate_windows per window key in one
// transaction that holds the row's lock (SELECT ... FOR UPDATE), so
// concurrent callers on any number of connections see each other's
// outcome. A window's first write inserts its row; when two workers
// insert at once, the loser retries under the winner's row lock.
//
// Calls are bounded (windowOpTimeout, connection retries for
// windowRetryFor): the windows are an optimisation, and the model call
// that asks goes out when the database does not answer.
type Windows struct {
	auth.Windows // on this store (UpdateWindow)
	s            *Store
	// now is the windows' clock, set by tests only; nil is the database
	// server's clock, one clock for every worker, so clock skew between
	// hosts does not move a window.
	now func() time.Time
}

const (
	windowRetryFor  = 2 * time.Second
	windowOpTimeout = 5 * time.Second
)

// Windows returns the rate-limit windows kept in the store's database.
func (s *Store) Windows() *Windows {
	w := &Windows{s: s}
	w.Windows.Store = w
	return w
}

// List returns the windows kept in the database, by key, and the time
// they are to be read at (the windows' clock: the database's), for
// `starter auth list`. It reads without locking rows: a listing is a
// snapshot, and a window that changes under it is shown as it was.
func (w *Windows) List() (map[string]auth.Window, time.Time, error) {
	out := map[string]auth.Window{}
	var now time.Time
	err := w.s.doWithin(min(w.s.retryFor, windowRetryFor), windowOpTimeout, func(ctx context.Context) error {
		clear(out)
		if err := w.s.pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
			return err
		}
		rows, err := w.s.pool.Query(ctx, `SELECT key, until, probe, probe_until FROM agent_rate_windows`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var key string
			var row auth.Window
			var probeUntil pgtype.Timestamptz // null: no lease, the zero time
			if err := rows.Scan(&key, &row.Until, &row.Probe, &probeUntil); err != nil {
				return err
			}
			row.ProbeUntil = probeUntil.Time
			out[key] = row
		}
		return rows.Err()
	})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("list rate-limit windows: %w", err)
	}
	if w.now != nil {
		now = w.now()
	}
	return out, now, nil
}

// errInsertRaced: another worker inserted the window's row first.
var errInsertRaced = errors.New("window row inserted concurrently")

// UpdateWindow is auth.WindowStore's: rule applied to the row of key and
// its result written, all in one transaction under the row's lock.
func (w *Windows) UpdateWindow(key string, rule func(cur *auth.Window, now time.Time) (*auth.Window, bool)) error {
	retryFor := min(w.s.retryFor, windowRetryFor)
	err := w.s.doWithin(retryFor, windowOpTimeout, func(ctx context.Context) error {
		for attempt := 0; ; attempt++ {
			err := pgx.BeginFunc(ctx, w.s.pool, func(tx pgx.Tx) error { return w.apply(ctx, tx, key, rule) })
			// After a lost insert the row exists: the next attempt
			// locks it. Deleted again in between, it may race again.
			if !errors.Is(err, errInsertRaced) || attempt == 5 {
				return err
			}
		}
	})
	if err != nil {
		return fmt.Errorf("rate-limit window %s: %w", key, err)
	}
	return nil
}

func (w *Windows) apply(ctx context.Context, tx pgx.Tx, key string, rule func(cur *auth.Window, now time.Time) (*auth.Window, bool)) error {
	var cur *auth.Window
	var row auth.Window
	var probeUntil pgtype.Timestamptz
	err := tx.QueryRow(ctx, `SELECT until, probe, probe_until FROM agent_rate_windows WHERE key = $1 FOR UPDATE`, key).
		Scan(&row.Until, &row.Probe, &probeUntil)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
	case err != nil:
		return err
	default:
		row.ProbeUntil, cur = probeUntil.Time, &row
	}
	var now time.Time
	if w.now != nil {
		now = w.now()
	} else if err := tx.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&now); err != nil {
		// Read after the lock: the time the rule is applied at.
		return err
	}
	next, changed := rule(cur, now)
	if !changed {
		return nil
	}
	var nextProbeUntil pgtype.Timestamptz // null when there is no lease
	if next != nil {
		nextProbeUntil = pgtype.Timestamptz{Time: next.ProbeUntil, Valid: !next.ProbeUntil.IsZero()}
	}
	switch {
	case next == nil && cur != nil:
		_, err = tx.Exec(ctx, `DELETE FROM agent_rate_windows WHERE key = $1`, key)
	case next != nil && cur != nil:
		_, err = tx.Exec(ctx, `UPDATE agent_rate_windows SET until = $2, probe = $3, probe_until = $4 WHERE key = $1`,
			key, next.Until, next.Probe, nextProbeUntil)
	case next != nil:
		tag, e := tx.Exec(ctx, `INSERT INTO agent_rate_windows (key, until, probe, probe_until) VALUES ($1, $2, $3, $4)
			ON CONFLICT (key) DO NOTHING`, key, next.Until, next.Probe, nextProbeUntil)
		if err = e; err == nil && tag.RowsAffected() == 0 {
			err = errInsertRaced
		}
	}
	return err
}
