//go:build !linux

package procsec

// DisableDumps does nothing outside Linux.
func DisableDumps() error { return nil }
