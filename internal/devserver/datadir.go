package devserver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"
)

const (
	dbFileName   = "temporal.db"
	lockFileName = "temporal.lock"
)

// dataDir is a prepared, locked data directory.
type dataDir struct {
	path string
	lock *flock.Flock // nil where locking is not supported
}

// dbPath is the SQLite file holding all server state.
func (d *dataDir) dbPath() string { return filepath.Join(d.path, dbFileName) }

// release unlocks the directory so another Server may use it.
func (d *dataDir) release() error {
	if d.lock == nil {
		return nil
	}
	err := d.lock.Close() // unlocks and closes the descriptor
	d.lock = nil
	if err != nil {
		return fmt.Errorf("devserver: release data dir lock %s: %w", d.path, err)
	}
	return nil
}

// openDataDir creates dir (not empty: Options.normalize; 0700: workflow payloads may hold private data),
// proves it is writable and locks it against a second server.
func openDataDir(dir string) (*dataDir, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("devserver: resolve data dir %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("devserver: data dir %s is not writable: %w", abs, err)
	}
	// MkdirAll succeeds on an existing read-only directory: creating the
	// lock file is the write that shows whether SQLite can create its
	// files there.
	lock, err := lockDir(abs)
	if err != nil {
		return nil, err
	}
	return &dataDir{path: abs, lock: lock}, nil
}

// lockDir takes an exclusive, non-blocking flock on <dir>/temporal.lock.
// Two servers on one SQLite file would fight over the history shard rather
// than fail; the lock turns that into a clear error. flock locks belong to
// the open file, so a second Start in the same process is refused too, and
// the kernel drops the lock if the process dies. Where the platform has no
// file locking the lock is nil: SQLite's own locking still prevents
// corruption, only the clear "in use" error is lost.
func lockDir(dir string) (*flock.Flock, error) {
	lock := flock.New(filepath.Join(dir, lockFileName), flock.SetFlag(os.O_RDWR|os.O_CREATE), flock.SetPermissions(0o600))
	ok, err := lock.TryLock()
	var pathErr *fs.PathError
	switch {
	case errors.Is(err, errors.ErrUnsupported):
		return nil, nil
	case errors.As(err, &pathErr) && pathErr.Op == "open":
		return nil, fmt.Errorf("devserver: data dir %s is not writable: %w", dir, err)
	case err != nil:
		return nil, fmt.Errorf("devserver: lock data dir %s: %w", dir, err)
	case !ok:
		return nil, fmt.Errorf("devserver: data dir %s is in use by another dev server", dir)
	}
	return lock, nil
}
