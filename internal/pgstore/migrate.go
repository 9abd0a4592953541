package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations are applied in order, each once; a database records the
// number applied in agent_schema_migrations. Append only: never edit one
// that has shipped.
var migrations = []string{
	// 1: sessions and their entries.
	`CREATE TABLE agent_sessions (
		id         text PRIMARY KEY,
		version    integer NOT NULL,
		created_at timestamptz NOT NULL,
		cwd        text NOT NULL DEFAULT ''
	);
	CREATE TABLE agent_session_entries (
		seq        bigserial PRIMARY KEY,
		session_id text NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
		entry_id   text NOT NULL,
		-- json, not jsonb: the line is kept as written, and json accepts
		-- the \u0000 escapes a tool output may hold.
		entry      json NOT NULL,
		UNIQUE (session_id, entry_id)
	);
	CREATE INDEX agent_session_entries_order ON agent_session_entries (session_id, seq);`,
	// 2: the worker host that holds a session's workspace (tools.placement host).
	`ALTER TABLE agent_sessions ADD COLUMN host text NOT NULL DEFAULT ''`,
	// 3: data kept beside a session (Store.PutAside), deleted with it.
	`CREATE TABLE agent_session_aside (
		session_id text NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
		key        text NOT NULL,
		data       bytea NOT NULL,
		PRIMARY KEY (session_id, key)
	)`,
	// 4: the session's git worktree (session.Header.Worktree; null: none).
	`ALTER TABLE agent_sessions ADD COLUMN worktree json`,
	// 5: the session whose prompt started this one, a sub-agent's
	// (session.Header.ParentSession; '': none).
	`ALTER TABLE agent_sessions ADD COLUMN parent_session text NOT NULL DEFAULT ''`,
	// 6: the rate-limit windows of provider credentials (Windows, SPEC
	// 18.1), one row per auth.WindowKey; probe '' and probe_until null:
	// no probe lease.
	`CREATE TABLE agent_rate_windows (
		key         text PRIMARY KEY,
		until       timestamptz NOT NULL,
		probe       text NOT NULL DEFAULT '',
		probe_until timestamptz
	)`,
}

// SchemaVersion is the number of migrations this build applies.
var SchemaVersion = len(migrations)

// migrationLock is the advisory lock key that serialises migrations of
// workers starting together ("durable-agent sessions").
const migrationLock = 0x64_61_73_65_73_73_31

// migrate brings the schema up to SchemaVersion in one transaction.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS agent_schema_migrations (
			version    integer PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return fmt.Errorf("create agent_schema_migrations: %w", err)
		}
		var have int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM agent_schema_migrations`).Scan(&have); err != nil {
			return err
		}
		if have > len(migrations) {
			return fmt.Errorf("session schema version %d is newer than this build knows (%d): upgrade this worker", have, len(migrations))
		}
		for v := have + 1; v <= len(migrations); v++ {
			if _, err := tx.Exec(ctx, migrations[v-1]); err != nil {
				return fmt.Errorf("migration %d: %w", v, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO agent_schema_migrations (version) VALUES ($1)`, v); err != nil {
				return err
			}
		}
		return nil
	})
}
