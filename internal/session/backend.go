package session

// Backend is what the worker's activities and the clients need of a
// session store: JSONL files on one machine (*Store), a database in a
// cluster (internal/pgstore). Append is idempotent by entry id (the first
// write of an id wins) and Load returns ErrNotFound (wrapped) for a
// session that does not exist.
type Backend interface {
	Load(sessionID string) (*Session, error)
	Append(sessionID string, entries ...Entry) (int, error)
	// Init creates the session with where's Cwd, Host, Worktree and
	// ParentSession if it does not exist and returns its header (an
	// existing session keeps its own).
	Init(sessionID string, where Header) (Header, error)
	// Delete removes the session; a missing one is not an error.
	Delete(sessionID string) error
	// List returns the ids of the sessions in the store, sorted.
	List() ([]string, error)
	// PutAside keeps data under key beside the session (Aside reads it,
	// nil when none; Delete removes it): a prompt's fault scripts, which
	// are not conversation.
	PutAside(sessionID, key string, data []byte) error
	Aside(sessionID, key string) ([]byte, error)
}

var _ Backend = (*Store)(nil)
