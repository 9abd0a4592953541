package auth_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/internal/auth/windowtest"
)

// The window contract (SPEC 18.1) holds for the stores of one auth.json,
// each store a worker process of the data directory.
func TestWindow_FileContract(t *testing.T) {
	windowtest.Run(t, func(t *testing.T, now func() time.Time) func() windowtest.Store {
		path := filepath.Join(t.TempDir(), auth.FileName)
		return func() windowtest.Store {
			f, err := auth.OpenFile(path, auth.FileOptions{Now: now, Env: func(string) (string, bool) { return "", false }})
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	})
}

// The window contract holds for Memory (one process: every "store" of a
// place is the same Memory).
func TestWindow_MemoryContract(t *testing.T) {
	windowtest.Run(t, func(t *testing.T, now func() time.Time) func() windowtest.Store {
		m := auth.NewMemory()
		auth.SetMemoryClock(m, now)
		return func() windowtest.Store { return m }
	})
}
