//go:build linux

package procsec

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// DisableDumps makes the process non-dumpable (see the package comment).
func DisableDumps() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl PR_SET_DUMPABLE 0: %w", err)
	}
	return nil
}
