//go:build !unix

package session

import (
	"fmt"
	"os"
)

// lockFile fails where flock(2) does not exist: appending without a lock
// could interleave two workers' writes.
func lockFile(f *os.File, exclusive bool) error {
	return fmt.Errorf("lock %s: file locking is only implemented on unix systems", f.Name())
}
