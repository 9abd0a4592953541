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

// Dumpable reports the process's dumpable attribute (PR_GET_DUMPABLE).
func Dumpable() (bool, error) {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil {
		return false, fmt.Errorf("prctl PR_GET_DUMPABLE: %w", err)
	}
	return v != 0, nil
}
