package devserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

const (
	dbFileName   = "temporal.db"
	lockFileName = "temporal.lock"
)

// dataDir is a prepared, locked data directory.
type dataDir struct {
	path string
	lock *os.File // nil where locking is not supported
}

// dbPath is the SQLite file holding all server state.
func (d *dataDir) dbPath() string { return filepath.Join(d.path, dbFileName) }

// release unlocks the directory so another Server may use it.
func (d *dataDir) release() error {
	if d.lock == nil {
		return nil
	}
	err := d.lock.Close() // closing the descriptor drops the lock
	d.lock = nil
	if err != nil {
		return fmt.Errorf("devserver: release data dir lock %s: %w", d.path, err)
	}
	return nil
}

// openDataDir creates dir (0700: workflow payloads may hold private data),
// proves it is writable and locks it against a second server.
func openDataDir(dir string) (*dataDir, error) {
	if dir == "" {
		return nil, errors.New("devserver: data dir is required")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("devserver: resolve data dir %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("devserver: data dir %s is not writable: %w", abs, err)
	}
	// MkdirAll succeeds on an existing read-only directory; only a real
	// write shows whether SQLite will be able to create its files there.
	probe, err := os.CreateTemp(abs, ".write-probe-*")
	if err != nil {
		return nil, fmt.Errorf("devserver: data dir %s is not writable: %w", abs, err)
	}
	_ = probe.Close()
	_ = os.Remove(probe.Name())

	lock, err := lockDir(abs)
	if err != nil {
		return nil, err
	}
	return &dataDir{path: abs, lock: lock}, nil
}
