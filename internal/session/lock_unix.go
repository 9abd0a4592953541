//go:build unix

package session

import (
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an advisory flock(2) on f, exclusive or shared, waiting
// for it. The lock belongs to this open file description, so it also
// excludes other descriptors of the same process, and closing f releases it.
func lockFile(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		for {
			lerr = syscall.Flock(int(fd), how)
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
