package auth

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The rules of windows are tested by their contract, which
// internal/pgstore's windowcontract_test.go runs against auth.File and
// the PostgreSQL windows; here is what only the file store does.

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

// SPEC 18.1 (starter auth list): a listing shows the windows the
// workers use. WithWindows puts each open window on its credential,
// leaves out windows that ended, and lists an open window of a
// credential the store does not hold as an entry of its own.
func TestWindow_WithWindows(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	creds := []Entry{
		{ID: "work", Provider: "anthropic", Kind: KindAPIKey, Sessions: 2},
		{ID: "spare", Provider: "anthropic", Kind: KindAPIKey, RateLimitedUntil: now.Add(time.Hour)},
	}
	for _, tc := range []struct {
		name    string
		windows map[string]Window
		want    []Entry
	}{
		{name: "none: no credential rate-limited, an old mark cleared", want: []Entry{
			{ID: "work", Provider: "anthropic", Kind: KindAPIKey, Sessions: 2},
			{ID: "spare", Provider: "anthropic", Kind: KindAPIKey},
		}},
		{name: "open and ended windows", windows: map[string]Window{
			WindowKey("anthropic", "work"):  {Until: now.Add(5 * time.Second)},
			WindowKey("anthropic", "spare"): {Until: now, Probe: "job", ProbeUntil: now.Add(time.Minute)},
		}, want: []Entry{
			{ID: "work", Provider: "anthropic", Kind: KindAPIKey, Sessions: 2, RateLimitedUntil: now.Add(5 * time.Second)},
			{ID: "spare", Provider: "anthropic", Kind: KindAPIKey},
		}},
		{name: "windows of credentials held elsewhere", windows: map[string]Window{
			WindowKey("openai", "other-host"): {Until: now.Add(time.Second)},
			WindowKey("scripted", ""):         {Until: now.Add(2 * time.Second)},
			WindowKey("openai", "gone"):       {Until: now.Add(-time.Second)},
		}, want: []Entry{
			{ID: "work", Provider: "anthropic", Kind: KindAPIKey, Sessions: 2},
			{ID: "spare", Provider: "anthropic", Kind: KindAPIKey},
			{ID: "other-host", Provider: "openai", RateLimitedUntil: now.Add(time.Second), WindowOnly: true},
			{ID: "-", Provider: "scripted", RateLimitedUntil: now.Add(2 * time.Second), WindowOnly: true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := WithWindows(creds, tc.windows, now)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("WithWindows =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

// ListWithWindows shows the windows given (a cluster's, on its clock)
// in place of auth.json's, which the workers of a cluster do not use.
func TestWindow_FileListWithOtherWindows(t *testing.T) {
	clk := newClock()
	f, err := OpenFile(filepath.Join(t.TempDir(), FileName), FileOptions{Now: clk.now, Env: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, f, key("work", "anthropic"))
	mustAdd(t, f, key("spare", "anthropic"))
	if err := f.RateLimited(WindowKey("anthropic", "spare"), 60_000); err != nil {
		t.Fatal(err)
	}
	// The other store's clock is an hour behind this one's: its window
	// is read on its own clock.
	theirs := clk.now().Add(-time.Hour)
	entries, err := f.ListWithWindows(map[string]Window{WindowKey("anthropic", "work"): {Until: theirs.Add(time.Second)}}, theirs)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 || !entries[0].RateLimitedUntil.Equal(theirs.Add(time.Second)) || !entries[1].RateLimitedUntil.IsZero() {
		t.Fatalf("ListWithWindows = %+v; want work limited by the other store's window, spare's auth.json window not shown", entries)
	}
}
