//go:build linux || darwin || freebsd || openbsd || netbsd || dragonfly

package devserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive, non-blocking flock on <dir>/temporal.lock.
// Two servers on one SQLite file would fight over the history shard rather
// than fail; the lock turns that into a clear error. flock locks belong to
// the open file, so a second Start in the same process is refused too, and
// the kernel drops the lock if the process dies.
func lockDir(dir string) (*os.File, error) {
	path := filepath.Join(dir, lockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("devserver: data dir %s is not writable: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("devserver: data dir %s is in use by another dev server", dir)
		}
		return nil, fmt.Errorf("devserver: lock data dir %s: %w", dir, err)
	}
	return f, nil
}
