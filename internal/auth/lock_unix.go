//go:build unix

package auth

import (
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory flock(2) on f, waiting for it;
// closing f releases it. Every File operation holds it, so workers on one
// machine read-modify-write auth.json one at a time.
func lockFile(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		for {
			lerr = syscall.Flock(int(fd), syscall.LOCK_EX)
			if lerr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	if lerr != nil {
		return fmt.Errorf("lock %s: %w", f.Name(), lerr)
	}
	return nil
}
