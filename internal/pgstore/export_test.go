package pgstore

import (
	"context"
	"time"
)

// OpenWithoutRetries is Open with no retries of connection errors, for
// the tests of package pgstore_test.
func OpenWithoutRetries(ctx context.Context, url string) (*Store, error) {
	return open(ctx, url, -1)
}

// WindowsAt is s.Windows() reading the time from now instead of the
// database's clock.
func WindowsAt(s *Store, now func() time.Time) *Windows {
	w := s.Windows()
	w.now = now
	return w
}
