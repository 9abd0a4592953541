package auth

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// windowStore is what File and Memory share of the window API.
type windowStore interface {
	Admit(key, holder string, lease time.Duration) (Admission, error)
	RateLimited(key string, retryAfterMs int64) error
	Settle(key, holder string) error
	Release(key, holder string) error
}

func stores(t *testing.T, clk *clock) map[string]windowStore {
	m := NewMemory()
	m.now = clk.now
	return map[string]windowStore{"file": openTemp(t, FileOptions{Now: clk.now}), "memory": m}
}

func mustAdmit(t *testing.T, s windowStore, key, holder string) Admission {
	t.Helper()
	a, err := s.Admit(key, holder, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Spec 18.1: a rate limit with a hint holds every caller of the credential
// until the hint expires; then one caller probes while the others keep
// holding; the probe's rate limit extends the window, its success clears
// it.
func TestWindow_HoldProbeExtendClear(t *testing.T) {
	for name, mk := range map[string]func(*clock) windowStore{
		"file":   func(c *clock) windowStore { return stores(t, c)["file"] },
		"memory": func(c *clock) windowStore { return stores(t, c)["memory"] },
	} {
		t.Run(name, func(t *testing.T) {
			clk := newClock()
			s := mk(clk)
			key := WindowKey("anthropic", "work")
			if a := mustAdmit(t, s, key, "job1"); a != (Admission{}) {
				t.Fatalf("no window: Admit = %+v, want call now without probe", a)
			}
			if err := s.RateLimited(key, 5000); err != nil {
				t.Fatal(err)
			}
			if a := mustAdmit(t, s, key, "job2"); a.Wait != 5*time.Second || a.Probe {
				t.Fatalf("in the window: Admit = %+v, want hold 5s", a)
			}
			// Another credential of the provider is not held.
			if a := mustAdmit(t, s, WindowKey("anthropic", "other"), "job2"); a != (Admission{}) {
				t.Fatalf("other credential: Admit = %+v, want call now", a)
			}
			clk.add(5 * time.Second)
			if a := mustAdmit(t, s, key, "job2"); !a.Probe || a.Wait != 0 {
				t.Fatalf("window over: first Admit = %+v, want the probe", a)
			}
			if a := mustAdmit(t, s, key, "job2"); !a.Probe {
				t.Fatalf("the probe asking again = %+v, want its lease kept", a)
			}
			for _, h := range []string{"job1", "job3"} {
				if a := mustAdmit(t, s, key, h); a.Probe || !a.Probing || a.Wait != 30*time.Second {
					t.Fatalf("%s during the probe = %+v, want hold for the lease (30s)", h, a)
				}
			}
			// The probe meets the limit again: the window is extended and
			// the lease is gone.
			if err := s.RateLimited(key, 5000); err != nil {
				t.Fatal(err)
			}
			if a := mustAdmit(t, s, key, "job3"); a.Wait != 5*time.Second {
				t.Fatalf("extended window: Admit = %+v, want hold 5s", a)
			}
			// A call admitted before the window that the provider took
			// does not end the window for the probe's sake.
			if err := s.Settle(key, "job1"); err != nil {
				t.Fatal(err)
			}
			if a := mustAdmit(t, s, key, "job1"); a.Probe || a.Wait != 5*time.Second {
				t.Fatalf("after a non-probe settle: Admit = %+v, want still holding 5s", a)
			}
			clk.add(5 * time.Second)
			if a := mustAdmit(t, s, key, "job3"); !a.Probe {
				t.Fatalf("second window over: Admit = %+v, want job3 to probe", a)
			}
			if err := s.Settle(key, "job3"); err != nil {
				t.Fatal(err)
			}
			for _, h := range []string{"job1", "job2", "job4"} {
				if a := mustAdmit(t, s, key, h); a != (Admission{}) {
					t.Fatalf("after the probe's success %s: Admit = %+v, want call now", h, a)
				}
			}
		})
	}
}

// A released or lapsed probe lease passes to the next caller: a probe
// whose call was cancelled, or whose worker died, holds nobody forever.
func TestWindow_LeaseReleasedOrLapsed(t *testing.T) {
	clk := newClock()
	for name, s := range stores(t, clk) {
		t.Run(name, func(t *testing.T) {
			key := WindowKey("openai", "k-"+name)
			if err := s.RateLimited(key, 1000); err != nil {
				t.Fatal(err)
			}
			clk.add(time.Second)
			if a := mustAdmit(t, s, key, "a"); !a.Probe {
				t.Fatalf("Admit = %+v, want a to probe", a)
			}
			if err := s.Release(key, "b"); err != nil { // not b's lease
				t.Fatal(err)
			}
			if a := mustAdmit(t, s, key, "b"); a.Probe {
				t.Fatalf("b took a's lease after releasing nothing: %+v", a)
			}
			if err := s.Release(key, "a"); err != nil {
				t.Fatal(err)
			}
			if a := mustAdmit(t, s, key, "b"); !a.Probe {
				t.Fatalf("after a's release: Admit = %+v, want b to probe", a)
			}
			clk.add(31 * time.Second) // b's worker died: its lease lapses
			if a := mustAdmit(t, s, key, "c"); !a.Probe {
				t.Fatalf("after b's lease lapsed: Admit = %+v, want c to probe", a)
			}
		})
	}
}

// Bad input is refused with an error naming it.
func TestWindow_BadInput(t *testing.T) {
	clk := newClock()
	for name, s := range stores(t, clk) {
		t.Run(name, func(t *testing.T) {
			if _, err := s.Admit("nokey", "h", time.Second); err == nil {
				t.Fatal("a key without provider/credential was accepted")
			}
			if _, err := s.Admit(WindowKey("openai", ""), "", time.Second); err == nil {
				t.Fatal("an empty holder was accepted")
			}
			if err := s.RateLimited(WindowKey("openai", ""), 0); err == nil {
				t.Fatal("a zero retry hint was accepted")
			}
		})
	}
}

// Several worker processes (stores on one auth.json) admitting callers
// concurrently when a window ends grant exactly one probe lease; a
// window is visible in `auth list` while open and pruned once stale.
func TestWindow_FileOneProbeAcrossProcesses(t *testing.T) {
	clk := newClock()
	path := filepath.Join(t.TempDir(), FileName)
	first, err := OpenFile(path, FileOptions{Now: clk.now, Env: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, first, key("work", "anthropic"))
	k := WindowKey("anthropic", "work")
	if err := first.RateLimited(k, 5000); err != nil {
		t.Fatal(err)
	}
	entries, _ := first.List()
	if len(entries) != 1 || !entries[0].RateLimitedUntil.Equal(clk.now().Add(5*time.Second)) {
		t.Fatalf("auth list during the window = %+v, want rateLimitedUntil in 5s", entries)
	}
	clk.add(5 * time.Second)
	const procs, callers = 4, 25
	var probes, held atomic.Int32
	var wg sync.WaitGroup
	for p := 0; p < procs; p++ {
		f, err := OpenFile(path, FileOptions{Now: clk.now, Env: noEnv})
		if err != nil {
			t.Fatal(err)
		}
		for c := 0; c < callers; c++ {
			wg.Add(1)
			go func(holder string) {
				defer wg.Done()
				a, err := f.Admit(k, holder, 30*time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				if a.Probe {
					probes.Add(1)
				} else if a.Wait > 0 {
					held.Add(1)
				}
			}(fmt.Sprintf("p%d-c%d", p, c))
		}
	}
	wg.Wait()
	if probes.Load() != 1 || held.Load() != procs*callers-1 {
		t.Fatalf("%d probes and %d held of %d callers, want 1 probe, the rest held", probes.Load(), held.Load(), procs*callers)
	}
	// Nobody settles (all workers gone): once the lease lapsed and the
	// window is stale, the next write prunes it.
	clk.add(staleWindow + time.Minute)
	mustAdd(t, first, key("spare", "anthropic"))
	if a, err := first.Admit(k, "late", time.Second); err != nil || a != (Admission{}) {
		t.Fatalf("after the stale window: Admit = %+v, %v; want call now", a, err)
	}
}
