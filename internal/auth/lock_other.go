//go:build !unix

package auth

import (
	"fmt"
	"os"
)

// lockFile fails where flock(2) does not exist: two workers updating
// auth.json without a lock could lose each other's blocks.
func lockFile(f *os.File) error {
	return fmt.Errorf("lock %s: file locking is only implemented on unix systems", f.Name())
}
