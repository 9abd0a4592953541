package auth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The rules of windows are tested by their contract
// (window_contract_test.go, package windowtest); here is what only the
// file store does.

// A window is visible in `auth list` while open, and once stale the
// next write of auth.json prunes it.
func TestWindow_FileListedWhileOpenPrunedWhenStale(t *testing.T) {
	clk := newClock()
	path := filepath.Join(t.TempDir(), FileName)
	f, err := OpenFile(path, FileOptions{Now: clk.now, Env: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, f, key("work", "anthropic"))
	k := WindowKey("anthropic", "work")
	if err := f.RateLimited(k, 5000); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), k) {
		t.Fatalf("auth.json does not hold the window %s:\n%s", k, b)
	}
	entries, _ := f.List()
	if len(entries) != 1 || !entries[0].RateLimitedUntil.Equal(clk.now().Add(5*time.Second)) {
		t.Fatalf("auth list during the window = %+v, want rateLimitedUntil in 5s", entries)
	}
	clk.add(5 * time.Second)
	if entries, _ := f.List(); len(entries) != 1 || !entries[0].RateLimitedUntil.IsZero() {
		t.Fatalf("auth list after the window = %+v, want no rateLimitedUntil", entries)
	}
	// Nobody settles (all workers gone): once the window is stale, the
	// next write prunes it from the file.
	clk.add(StaleWindow + time.Minute)
	mustAdd(t, f, key("spare", "anthropic"))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), k) {
		t.Fatalf("auth.json still holds the stale window %s:\n%s", k, b)
	}
}
