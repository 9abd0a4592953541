//go:build !(linux || darwin || freebsd || openbsd || netbsd || dragonfly)

package devserver

import "os"

// lockDir does nothing where flock is unavailable; SQLite's own file locking
// still prevents corruption, only the clear "in use" error is lost.
func lockDir(string) (*os.File, error) { return nil, nil }
