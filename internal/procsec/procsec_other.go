//go:build !linux

package procsec

// DisableDumps does nothing outside Linux.
func DisableDumps() error { return nil }

// Dumpable reports true outside Linux: nothing was changed.
func Dumpable() (bool, error) { return true, nil }
