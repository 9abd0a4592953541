package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/auth"
)

// Without a clock of its own the windows run on the database's clock: a
// hint holds callers of every pool for its length, then one probes.
func TestWindows_DatabaseClock(t *testing.T) {
	e := newEnv(t)
	url := e.url(t)
	a, b := open(t, url).Windows(), open(t, url).Windows()
	key := auth.WindowKey("anthropic", "work")
	if err := a.RateLimited(key, 1500); err != nil {
		t.Fatal(err)
	}
	adm, err := b.Admit(key, "job", time.Minute)
	if err != nil || adm.Wait <= 0 || adm.Wait > 1500*time.Millisecond || adm.Probe {
		t.Fatalf("in the window: Admit = %+v, %v; want hold up to 1.5s", adm, err)
	}
	time.Sleep(adm.Wait)
	if adm, err := b.Admit(key, "job", time.Minute); err != nil || !adm.Probe {
		t.Fatalf("window over: Admit = %+v, %v; want the probe", adm, err)
	}
	if adm, err := a.Admit(key, "other", time.Minute); err != nil || !adm.Probing || adm.Wait <= 58*time.Second {
		t.Fatalf("during the probe: Admit = %+v, %v; want hold for the minute's lease", adm, err)
	}
	// The row is the window: the probe's success deletes it.
	if err := a.Settle(key, "job"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := open(t, url).Pool().QueryRow(context.Background(), `SELECT count(*) FROM agent_rate_windows`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("rows after the probe's success = %d, %v; want none", n, err)
	}
}

// starter auth list reads a cluster's windows (SPEC 18.1): List returns
// every row, probe lease included, and the database's time to read them
// at.
func TestWindows_List(t *testing.T) {
	e := newEnv(t)
	url := e.url(t)
	w := open(t, url).Windows()
	if got, now, err := w.List(); err != nil || len(got) != 0 || now.IsZero() {
		t.Fatalf("List of no windows = %v, %v, %v; want none and the database's time", got, now, err)
	}
	limited, probed := auth.WindowKey("anthropic", "work"), auth.WindowKey("openai", "team")
	if err := w.RateLimited(limited, 60_000); err != nil {
		t.Fatal(err)
	}
	// A window that ended and has a probe out.
	if err := w.RateLimited(probed, 100); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if a, err := w.Admit(probed, "probe-1", time.Minute); err != nil || !a.Probe {
		t.Fatalf("Admit after the window = %+v, %v; want the probe", a, err)
	}
	got, now, err := w.List()
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(now); d < -time.Minute || d > time.Minute {
		t.Fatalf("List's time %v is not the database's now", now)
	}
	if lw, ok := got[limited]; !ok || lw.Until.Sub(now) < 50*time.Second || lw.Until.Sub(now) > time.Minute || lw.Probe != "" {
		t.Fatalf("window %s = %+v (listed %v); want open a minute from %v", limited, lw, ok, now)
	}
	if pw := got[probed]; pw.Probe != "probe-1" || !pw.Until.Before(now) || pw.ProbeUntil.Sub(now) < 50*time.Second {
		t.Fatalf("window %s = %+v; want ended, probe-1's lease for a minute", probed, pw)
	}
	if len(got) != 2 {
		t.Fatalf("List = %v, want 2 windows", got)
	}
}
