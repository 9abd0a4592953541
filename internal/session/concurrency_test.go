package session

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

// Re-run activities on several workers write the same deterministic ids at
// the same time; every id must land in the file exactly once.
func TestAppend_ConcurrentSameIDsNoDuplicates(t *testing.T) {
	const (
		workers = 6
		nIDs    = 30
		batch   = 3
	)
	entries := make([]Entry, nIDs)
	for i := range entries {
		parent := ""
		if i > 0 {
			parent = entries[i-1].ID
		}
		entries[i] = msgEntry(fmt.Sprintf("e%02d", i), parent, agent.RoleUser, strings.Repeat("x", 300))
	}
	tests := []struct {
		name   string
		shared bool
	}{
		{"goroutines sharing one store", true},
		{"one store per goroutine, like separate processes", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			shared := openStore(t)
			var (
				wg      sync.WaitGroup
				start   = make(chan struct{})
				mu      sync.Mutex
				written int
				errs    []error
			)
			for w := 0; w < workers; w++ {
				st := shared
				if !tt.shared {
					st = mustOpen(t, shared.dir)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					// Each worker starts at a different batch and wraps
					// around, so every batch is contended.
					for k := 0; k < nIDs/batch; k++ {
						b := (k + w) % (nIDs / batch)
						n, err := st.Append("s", entries[b*batch:(b+1)*batch]...)
						if err == nil {
							_, err = st.Load("s")
						}
						mu.Lock()
						written += n
						if err != nil {
							errs = append(errs, err)
						}
						mu.Unlock()
					}
				}()
			}
			close(start)
			wg.Wait()
			if len(errs) > 0 {
				t.Fatalf("errors: %v", errs)
			}
			if written != nIDs {
				t.Fatalf("sum of written = %d, want %d (each id written once)", written, nIDs)
			}
			s := mustLoad(t, mustOpen(t, shared.dir), "s")
			if len(s.Entries) != nIDs || len(s.Warnings) != 0 {
				t.Fatalf("loaded %d entries with warnings %q, want %d and none", len(s.Entries), s.Warnings, nIDs)
			}
			if got := countLines(readFile(t, shared.Path("s"))); got != nIDs+1 {
				t.Fatalf("file has %d lines, want %d", got, nIDs+1)
			}
			if got := len(s.Branch(entries[nIDs-1].ID)); got != nIDs {
				t.Fatalf("branch length = %d, want %d", got, nIDs)
			}
		})
	}
}
