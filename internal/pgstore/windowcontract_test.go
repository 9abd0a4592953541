package pgstore_test

// The contract of a rate-limit window store (SPEC 18.1), written once and
// run against both implementations: the auth.json of one data directory
// (auth.File) and the PostgreSQL windows of a cluster (pgstore.Windows).
//
// A store is opened on a place (one auth.json, one database); every store
// opened on the same place shares its windows, as the worker processes
// of one data directory, or the workers of one database, do. The
// contract: a rate limit holds every caller of the credential until the
// hint expires; then exactly one caller, across all stores, gets the
// probe lease; its rate limit extends the window, its success clears it,
// its release or its lapse passes the lease on; a window nobody settles
// is dropped once stale; bad input is refused.

import (
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/internal/pgstore"
)

// The rate-limit windows of a cluster keep the window contract: each
// store of a place is a connection pool of its own on one database, as
// the workers of a cluster are; among them, exactly one caller probes a
// window.
func TestWindows_Contract(t *testing.T) {
	e := newEnv(t)
	runWindowContract(t, func(t *testing.T, now func() time.Time) func() windowStore {
		url := e.url(t)
		return func() windowStore {
			return pgstore.WindowsAt(open(t, url), now)
		}
	})
}

// The window contract holds for the stores of one auth.json, each store
// a worker process of the data directory.
func TestWindows_FileContract(t *testing.T) {
	runWindowContract(t, func(t *testing.T, now func() time.Time) func() windowStore {
		path := filepath.Join(t.TempDir(), auth.FileName)
		return func() windowStore {
			f, err := auth.OpenFile(path, auth.FileOptions{Now: now, Env: func(string) (string, bool) { return "", false }})
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	})
}

// windowStore is the window API every implementation has.
type windowStore interface {
	Admit(key, holder string, lease time.Duration) (auth.Admission, error)
	RateLimited(key string, retryAfterMs int64) error
	Settle(key, holder string) error
	Release(key, holder string) error
}

// windowPlace makes a fresh place for one subtest, whose stores read the time
// from now, and returns a function that opens a store on it (each call
// another store: another process, another connection pool).
type windowPlace func(t *testing.T, now func() time.Time) (open func() windowStore)

// clock is a settable clock, safe for concurrent use.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

// newClock returns a clock at a fixed time.
func newClock() *clock { return &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)} }

// Now is the clock's time.
func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Add moves the clock on.
func (c *clock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

const lease = 30 * time.Second

// runWindowContract runs the contract against the stores of place.
func runWindowContract(t *testing.T, place windowPlace) {
	t.Run("HoldProbeExtendClear", func(t *testing.T) { holdProbeExtendClear(t, place) })
	t.Run("LeaseReleasedOrLapsed", func(t *testing.T) { leaseReleasedOrLapsed(t, place) })
	t.Run("StaleWindowDropped", func(t *testing.T) { staleWindowDropped(t, place) })
	t.Run("BadInput", func(t *testing.T) { badInput(t, place) })
	t.Run("OneProbeAcrossStores", func(t *testing.T) { oneProbeAcrossStores(t, place) })
}

func mustAdmit(t *testing.T, s windowStore, key, holder string) auth.Admission {
	t.Helper()
	a, err := s.Admit(key, holder, lease)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Spec 18.1: a rate limit with a hint holds every caller of the credential
// until the hint expires; then one caller probes while the others keep
// holding; the probe's rate limit extends the window, its success clears
// it. Two stores on one place take turns: what one writes the other sees.
func holdProbeExtendClear(t *testing.T, place windowPlace) {
	clk := newClock()
	open := place(t, clk.Now)
	s, other := open(), open()
	key := auth.WindowKey("anthropic", "work")
	if a := mustAdmit(t, s, key, "job1"); a != (auth.Admission{}) {
		t.Fatalf("no window: Admit = %+v, want call now without probe", a)
	}
	must(t, s.RateLimited(key, 5000))
	if a := mustAdmit(t, other, key, "job2"); a.Wait != 5*time.Second || a.Probe {
		t.Fatalf("in the window: Admit = %+v, want hold 5s", a)
	}
	// Another credential of the provider is not held.
	if a := mustAdmit(t, s, auth.WindowKey("anthropic", "other"), "job2"); a != (auth.Admission{}) {
		t.Fatalf("other credential: Admit = %+v, want call now", a)
	}
	clk.Add(5 * time.Second)
	if a := mustAdmit(t, other, key, "job2"); !a.Probe || a.Wait != 0 {
		t.Fatalf("window over: first Admit = %+v, want the probe", a)
	}
	if a := mustAdmit(t, s, key, "job2"); !a.Probe {
		t.Fatalf("the probe asking again = %+v, want its lease kept", a)
	}
	for _, h := range []string{"job1", "job3"} {
		if a := mustAdmit(t, s, key, h); a.Probe || !a.Probing || a.Wait != lease {
			t.Fatalf("%s during the probe = %+v, want hold for the lease (30s)", h, a)
		}
	}
	// The probe meets the limit again: the window is extended and the
	// lease is gone.
	must(t, other.RateLimited(key, 5000))
	if a := mustAdmit(t, s, key, "job3"); a.Wait != 5*time.Second {
		t.Fatalf("extended window: Admit = %+v, want hold 5s", a)
	}
	// A shorter hint does not shorten the window.
	must(t, s.RateLimited(key, 1000))
	if a := mustAdmit(t, other, key, "job3"); a.Wait != 5*time.Second {
		t.Fatalf("after a shorter hint: Admit = %+v, want still hold 5s", a)
	}
	// A call admitted before the window that the provider took does not
	// end the window for the probe's sake.
	must(t, s.Settle(key, "job1"))
	if a := mustAdmit(t, other, key, "job1"); a.Probe || a.Wait != 5*time.Second {
		t.Fatalf("after a non-probe settle: Admit = %+v, want still holding 5s", a)
	}
	clk.Add(5 * time.Second)
	if a := mustAdmit(t, s, key, "job3"); !a.Probe {
		t.Fatalf("second window over: Admit = %+v, want job3 to probe", a)
	}
	must(t, other.Settle(key, "job3"))
	for _, h := range []string{"job1", "job2", "job4"} {
		if a := mustAdmit(t, s, key, h); a != (auth.Admission{}) {
			t.Fatalf("after the probe's success %s: Admit = %+v, want call now", h, a)
		}
	}
}

// A released or lapsed probe lease passes to the next caller: a probe
// whose call was cancelled, or whose worker died, holds nobody forever.
func leaseReleasedOrLapsed(t *testing.T, place windowPlace) {
	clk := newClock()
	s := place(t, clk.Now)()
	key := auth.WindowKey("openai", "k")
	must(t, s.RateLimited(key, 1000))
	clk.Add(time.Second)
	if a := mustAdmit(t, s, key, "a"); !a.Probe {
		t.Fatalf("Admit = %+v, want a to probe", a)
	}
	must(t, s.Release(key, "b")) // not b's lease
	if a := mustAdmit(t, s, key, "b"); a.Probe {
		t.Fatalf("b took a's lease after releasing nothing: %+v", a)
	}
	must(t, s.Release(key, "a"))
	if a := mustAdmit(t, s, key, "b"); !a.Probe {
		t.Fatalf("after a's release: Admit = %+v, want b to probe", a)
	}
	clk.Add(lease + time.Second) // b's worker died: its lease lapses
	if a := mustAdmit(t, s, key, "c"); !a.Probe {
		t.Fatalf("after b's lease lapsed: Admit = %+v, want c to probe", a)
	}
}

// A window whose probe never reported (every worker gone) is dropped once
// stale: the next caller calls without holding anyone behind a probe.
func staleWindowDropped(t *testing.T, place windowPlace) {
	clk := newClock()
	s := place(t, clk.Now)()
	key := auth.WindowKey("anthropic", "idle")
	must(t, s.RateLimited(key, 1000))
	clk.Add(time.Second)
	if a := mustAdmit(t, s, key, "gone"); !a.Probe {
		t.Fatalf("Admit = %+v, want gone to probe", a)
	}
	// Still inside the probe's lease: held.
	if a := mustAdmit(t, s, key, "next"); !a.Probing {
		t.Fatalf("during the lease: Admit = %+v, want held for the probe", a)
	}
	clk.Add(auth.StaleWindow + time.Minute)
	for _, h := range []string{"late1", "late2"} {
		if a := mustAdmit(t, s, key, h); a != (auth.Admission{}) {
			t.Fatalf("after the stale window: Admit(%s) = %+v; want call now, no probe", h, a)
		}
	}
}

// Bad input is refused with an error naming it.
func badInput(t *testing.T, place windowPlace) {
	s := place(t, newClock().Now)()
	if _, err := s.Admit("nokey", "h", time.Second); err == nil {
		t.Fatal("a key without provider/credential was accepted")
	}
	if _, err := s.Admit(auth.WindowKey("openai", ""), "", time.Second); err == nil {
		t.Fatal("an empty holder was accepted")
	}
	if err := s.RateLimited(auth.WindowKey("openai", ""), 0); err == nil {
		t.Fatal("a zero retry hint was accepted")
	}
}

// Several stores on one place (worker processes on one auth.json, pools
// on one database) admitting callers concurrently when a window ends
// grant exactly one probe lease; the others hold until its outcome.
func oneProbeAcrossStores(t *testing.T, place windowPlace) {
	clk := newClock()
	open := place(t, clk.Now)
	const procs, callers = 4, 25
	stores := make([]windowStore, procs)
	for p := range stores {
		stores[p] = open()
	}
	k := auth.WindowKey("anthropic", "work")
	must(t, stores[0].RateLimited(k, 5000))
	clk.Add(5 * time.Second)
	var probes, held atomic.Int32
	var probe atomic.Value
	var wg sync.WaitGroup
	for p, s := range stores {
		for c := 0; c < callers; c++ {
			wg.Add(1)
			go func(holder string) {
				defer wg.Done()
				a, err := s.Admit(k, holder, lease)
				if err != nil {
					t.Error(err)
					return
				}
				if a.Probe {
					probes.Add(1)
					probe.Store(holder)
				} else if a.Wait > 0 && a.Probing {
					held.Add(1)
				}
			}(fmt.Sprintf("p%d-c%d", p, c))
		}
	}
	wg.Wait()
	if probes.Load() != 1 || held.Load() != procs*callers-1 {
		t.Fatalf("%d probes and %d held for the probe of %d callers, want 1 probe, the rest held", probes.Load(), held.Load(), procs*callers)
	}
	// The probe's success, reported through another store, frees them all.
	must(t, stores[procs-1].Settle(k, probe.Load().(string)))
	for p, s := range stores {
		if a := mustAdmit(t, s, k, fmt.Sprintf("after-%d", p)); a != (auth.Admission{}) {
			t.Fatalf("store %d after the probe's success: Admit = %+v, want call now", p, a)
		}
	}
}
