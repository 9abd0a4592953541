// Package pgstore keeps sessions in PostgreSQL, for workers on several
// machines: it implements session.Backend with the JSONL store's contract
// and errors, row for line (docs/cluster.md, "The PostgreSQL store": a
// header row, entries in insertion order, Append idempotent by entry id
// and serialised per session by a row lock on its header, Load building
// the session package's one *session.Session; a missing session is
// session.ErrNotFound). The database also keeps the credentials'
// rate-limit windows of the workers that share it (Store.Windows,
// windows.go), with package auth's rules. The schema is created and
// migrated when the store is opened, under an advisory lock, so workers
// may start at the same time.
//
// Connection failures (PostgreSQL restarting, a failover) are retried
// inside each call for up to RetryFor; every operation is safe to
// repeat, because Append skips ids already written.
package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/durableagent/durableagent/internal/session"
)

const (
	// RetryFor bounds how long one call keeps retrying after connection
	// errors before it returns the error. It stays below the 10 s
	// start-to-close timeout of the workflow's session activities and the
	// model call's heartbeat timeout (default 20 s), since CallModel loads
	// the session before its first heartbeat: a retried call still reports
	// in time.
	RetryFor = 8 * time.Second
	// opTimeout bounds one call in all.
	opTimeout         = 15 * time.Second
	defaultConnectTTL = 5 * time.Second
)

// Store is a session store in one PostgreSQL database. It is safe for
// concurrent use, and any number of processes may share the database.
type Store struct {
	pool *pgxpool.Pool
	// retryFor is RetryFor; negative (tests only): no retries.
	retryFor time.Duration
}

// Open connects to the database of url (a postgres:// URL or a libpq
// key=value string; "" takes everything from the PG* environment variables
// as libpq does), creates or migrates the schema, and returns the store.
func Open(ctx context.Context, url string) (*Store, error) {
	return open(ctx, url, RetryFor)
}

func open(ctx context.Context, url string, retryFor time.Duration) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx masks the password in the text it quotes.
		return nil, fmt.Errorf("open postgres session store: %w", err)
	}
	cfg.ConnConfig.ConnectTimeout = cmp.Or(cfg.ConnConfig.ConnectTimeout, defaultConnectTTL)
	s := &Store{retryFor: retryFor}
	s.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres session store: %w", err)
	}
	if err := s.retry(ctx, s.retryFor, func(ctx context.Context) error { return migrate(ctx, s.pool) }); err != nil {
		s.pool.Close()
		return nil, fmt.Errorf("open postgres session store at %s: %w", where(cfg.ConnConfig), err)
	}
	return s, nil
}

// where names the database without credentials.
func where(c *pgx.ConnConfig) string {
	host := c.Host
	if strings.HasPrefix(host, "/") {
		host = "unix socket " + host
	}
	return fmt.Sprintf("%s:%d/%s", host, c.Port, c.Database)
}

// Close closes the connections.
func (s *Store) Close() { s.pool.Close() }

// Pool returns the connection pool (for tests and tools that inspect the
// tables).
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Append writes the entries that are not yet in the session and returns
// how many it wrote, creating the session (with an empty cwd) if it is
// missing, even for zero entries. The first entry with a given id wins: an
// id already stored is skipped, and so is a repeat within the call. The
// whole call is one transaction: a failed Append leaves nothing behind.
//
// After a connection error Append is retried; if the first attempt
// committed before the connection broke, the retry writes nothing and the
// count says 0 although the entries are stored.
func (s *Store) Append(sessionID string, entries ...session.Entry) (int, error) {
	lines, err := session.EncodeEntries(sessionID, entries)
	if err != nil {
		return 0, err
	}
	var written int
	err = s.op("append to session", sessionID, func(ctx context.Context) error {
		written = 0
		// One batch is one implicit transaction.
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO agent_sessions (id, version, created_at, cwd) VALUES ($1, $2, $3, '')
			ON CONFLICT (id) DO NOTHING`, sessionID, session.FormatVersion, now())
		b.Queue(`SELECT 1 FROM agent_sessions WHERE id = $1 FOR NO KEY UPDATE`, sessionID)
		for i, line := range lines {
			// A repeat within the call conflicts with the row its first
			// insert wrote, earlier in the same transaction.
			b.Queue(`INSERT INTO agent_session_entries (session_id, entry_id, entry) VALUES ($1, $2, ($3::text)::json)
				ON CONFLICT (session_id, entry_id) DO NOTHING`, sessionID, entries[i].ID, string(line))
		}
		res := s.pool.SendBatch(ctx, b)
		defer res.Close()
		for i := range len(lines) + 2 { // the session row, its lock, then the entries
			tag, err := res.Exec()
			if err != nil {
				return err
			}
			if i >= 2 {
				written += int(tag.RowsAffected())
			}
		}
		return res.Close()
	})
	if err != nil {
		return 0, err
	}
	return written, nil
}

// Init creates the session with where's Cwd, Host, Worktree and
// ParentSession if it does not exist and returns the header in force: an
// existing session keeps its own.
func (s *Store) Init(sessionID string, where session.Header) (session.Header, error) {
	var h session.Header
	err := s.op("init session", sessionID, func(ctx context.Context) error {
		if _, err := s.pool.Exec(ctx, `INSERT INTO agent_sessions (id, version, created_at, cwd, host, worktree, parent_session) VALUES ($1, $2, $3, $4, $5, $6::json, $7)
			ON CONFLICT (id) DO NOTHING`, sessionID, session.FormatVersion, now(), where.Cwd, where.Host, where.Worktree, where.ParentSession); err != nil {
			return err
		}
		// A statement of its own, so it sees a row another process
		// committed after the insert began. The worktree column is JSON
		// (null: none), which pgx decodes for the *session.Worktree itself.
		h = session.Header{Type: session.HeaderType, ID: sessionID}
		return s.pool.QueryRow(ctx, `SELECT version, created_at, cwd, host, worktree, parent_session FROM agent_sessions WHERE id = $1`, sessionID).
			Scan(&h.Version, &h.Timestamp, &h.Cwd, &h.Host, &h.Worktree, &h.ParentSession)
	})
	if err != nil {
		return session.Header{}, err
	}
	h.Timestamp = h.Timestamp.UTC()
	return h, nil
}

// Load reads a session: its header and its entries in insertion order. A
// missing session gives session.ErrNotFound wrapped with the id. A stored
// entry that does not decode (written by hand, or by a newer version) is
// skipped and described in Session.Warnings, as the JSONL store skips a
// bad line.
func (s *Store) Load(sessionID string) (*session.Session, error) {
	var sess *session.Session
	err := s.op("load session", sessionID, func(ctx context.Context) error {
		// One statement, one snapshot: the header and the entries agree.
		rows, err := s.pool.Query(ctx, `SELECT s.version, s.created_at, s.cwd, s.host, s.worktree, s.parent_session, e.seq, e.entry::text
			FROM agent_sessions s LEFT JOIN agent_session_entries e ON e.session_id = s.id
			WHERE s.id = $1 ORDER BY e.seq`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		h := session.Header{Type: session.HeaderType, ID: sessionID}
		var entries []session.Entry
		var warnings []string
		found := false
		for rows.Next() {
			var seq *int64
			var text *string
			if err := rows.Scan(&h.Version, &h.Timestamp, &h.Cwd, &h.Host, &h.Worktree, &h.ParentSession, &seq, &text); err != nil {
				return err
			}
			found = true
			if seq == nil { // a session without entries
				continue
			}
			e, err := session.DecodeEntry([]byte(*text))
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("entry row %d: %v, skipped", *seq, err))
				continue
			}
			entries = append(entries, e)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if !found {
			sess = nil
			return nil
		}
		if h.Version > session.FormatVersion {
			return session.NewerFormat(h.Version) // permanent: retrying cannot read it
		}
		h.Timestamp = h.Timestamp.UTC()
		sess = &session.Session{Header: h, Entries: entries, Warnings: warnings}
		return nil
	})
	if err == nil && sess == nil { // the closure sets sess only when it succeeds
		err = fmt.Errorf("load session %q: %w", sessionID, session.ErrNotFound)
	}
	return sess, err
}

// List returns the ids of the sessions in the store, sorted.
func (s *Store) List() ([]string, error) {
	var ids []string
	err := s.doWithin(s.retryFor, opTimeout, func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `SELECT id FROM agent_sessions ORDER BY id COLLATE "C"`)
		if err != nil {
			return err
		}
		ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	return ids, nil
}

// now is the creation time stored in a header, at the database's
// precision (microseconds), so Init returns what Load will.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// op runs fn on session sessionID with the store's overall timeout and
// connection retries, once the id is valid; its error names what and the id.
func (s *Store) op(what, sessionID string, fn func(ctx context.Context) error) error {
	if err := session.ValidateID(sessionID); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := s.doWithin(s.retryFor, opTimeout, fn); err != nil {
		return fmt.Errorf("%s %q: %w", what, sessionID, err)
	}
	return nil
}

// doWithin runs op with timeout in all, retrying connection errors for
// retryFor (negative: no retries).
func (s *Store) doWithin(retryFor, timeout time.Duration, op func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return s.retry(ctx, retryFor, op)
}

// retry runs op until it succeeds, fails with an error that is not a
// connection problem, or has failed for longer than retryFor.
func (s *Store) retry(ctx context.Context, retryFor time.Duration, op func(ctx context.Context) error) error {
	var first time.Time
	delay := 100 * time.Millisecond
	for {
		err := op(ctx)
		if err == nil || !transient(err) || retryFor < 0 {
			return err
		}
		if first.IsZero() {
			first = time.Now()
		}
		if time.Since(first)+delay > retryFor {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Second)
	}
}

// transient reports errors that a new connection may not meet: the server
// refusing or dropping connections (restart, failover, network), not SQL
// errors, nor a session or schema newer than this build (errors that wrap
// no connection error).
func transient(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// 08: connection exception; 57P01-3: admin or crash shutdown,
		// cannot connect now; 40001, 40P01: serialization failure,
		// deadlock; 53300: too many connections.
		return strings.HasPrefix(pgErr.Code, "08") ||
			slices.Contains([]string{"57P01", "57P02", "57P03", "40001", "40P01", "53300"}, pgErr.Code)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		strings.Contains(err.Error(), "conn closed")
}

// PutAside keeps data under key beside the session, outside its entries
// (as session.Store.PutAside); the session must exist (Init).
func (s *Store) PutAside(sessionID, key string, data []byte) error {
	if err := session.ValidateID(key); err != nil {
		return fmt.Errorf("put aside: %w", err)
	}
	return s.op("put aside "+key+" of session", sessionID, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `INSERT INTO agent_session_aside (session_id, key, data) VALUES ($1, $2, $3)
			ON CONFLICT (session_id, key) DO UPDATE SET data = EXCLUDED.data`, sessionID, key, data)
		return err
	})
}

// Aside returns the data PutAside kept under key (nil when none).
func (s *Store) Aside(sessionID, key string) (data []byte, err error) {
	if err := session.ValidateID(key); err != nil {
		return nil, fmt.Errorf("read aside: %w", err)
	}
	err = s.op("read aside "+key+" of session", sessionID, func(ctx context.Context) error {
		err := s.pool.QueryRow(ctx, `SELECT data FROM agent_session_aside WHERE session_id = $1 AND key = $2`,
			sessionID, key).Scan(&data)
		if errors.Is(err, pgx.ErrNoRows) {
			data, err = nil, nil
		}
		return err
	})
	return data, err
}

// Delete removes a session: its header row and, by the foreign keys' ON
// DELETE CASCADE, its entries and what was kept beside it, in one statement. A session that does not
// exist is not an error, so a Delete repeated after a connection error or
// a crash finishes the job.
func (s *Store) Delete(sessionID string) error {
	return s.op("delete session", sessionID, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `DELETE FROM agent_sessions WHERE id = $1`, sessionID)
		return err
	})
}
