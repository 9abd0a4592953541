package auth

import "time"

// SetMemoryClock sets the clock of m, for the tests of package auth_test.
func SetMemoryClock(m *Memory, now func() time.Time) { m.now = now }
