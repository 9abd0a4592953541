package auth

import (
	"cmp"
	"fmt"
	"strings"
	"time"
)

// Window is the rate-limit window of one credential (SPEC 18.1; the
// package doc states the rules).
type Window struct {
	// Until is when the provider's retry hint expires.
	Until time.Time `json:"until"`
	// Probe is the holder of the probe lease ("" when none); ProbeUntil
	// is when the lease lapses if its holder never settles it.
	Probe      string    `json:"probe,omitempty"`
	ProbeUntil time.Time `json:"probeUntil,omitzero"`
}

// Admission is the answer to a caller asking to make a call.
type Admission struct {
	// Wait is how long to hold before asking again; 0 means call now.
	Wait time.Duration
	// Probe says the caller holds the probe lease: it must report the
	// outcome (RateLimited, Settle) or Release the lease.
	Probe bool
	// Probing says another caller holds the probe lease: its outcome
	// may come before Wait, so ask again sooner.
	Probing bool
}

// StaleWindow is how long after its end a window nobody probed is kept:
// past it the credential is presumed free again (pruned).
const StaleWindow = 5 * time.Minute

// WindowKey is the key of the window of a provider's credential; id ""
// is a provider called without a credential (a local server, the
// scripted fake), whose callers share one window.
func WindowKey(provider, credentialID string) string {
	return provider + "/" + cmp.Or(credentialID, "-")
}

// Stale reports whether w ended StaleWindow ago with no live probe
// lease: the credential is presumed free again and the window may be
// dropped.
func (w Window) Stale(now time.Time) bool {
	return now.Sub(w.Until) > StaleWindow && !now.Before(w.ProbeUntil)
}

// WindowStore keeps rate-limit windows: UpdateWindow applies rule to the
// window of key as stored (nil: none) at the store's time now and, when
// rule reports a change, stores the window it returns (nil: delete it),
// all under one lock, so concurrent callers see each other's outcome.
// File keeps them in auth.json, the PostgreSQL store of a cluster in its
// database.
type WindowStore interface {
	UpdateWindow(key string, rule func(w *Window, now time.Time) (next *Window, changed bool)) error
}

// Windows are the rules of coordinated backoff, written once for every
// WindowStore (File and pgstore.Windows embed it).
type Windows struct{ Store WindowStore }

// Admit asks to make a call on the credential of key (WindowKey) as
// holder (a stable id of the call, the same on every ask). With no
// window open it answers call now; during a window, hold for Wait; when
// the window is over, the first caller gets the probe lease for lease
// and calls, the others hold until the lease ends or is settled. A
// window that went stale (see Stale) is dropped and the call goes out. A
// key that is not a WindowKey and an empty holder are refused.
func (ws Windows) Admit(key, holder string, lease time.Duration) (a Admission, err error) {
	if key == "" || !strings.Contains(key, "/") {
		return Admission{}, fmt.Errorf("rate-limit window: bad key %q (want provider/credential, see WindowKey)", key)
	}
	if holder == "" {
		return Admission{}, fmt.Errorf("rate-limit window %s: empty holder", key)
	}
	err = ws.Store.UpdateWindow(key, func(w *Window, now time.Time) (*Window, bool) {
		a = Admission{} // the store may apply the rule more than once
		switch {
		case w == nil:
			return nil, false
		case w.Stale(now):
			return nil, true
		case now.Before(w.Until):
			a = Admission{Wait: w.Until.Sub(now)}
			return w, false
		case w.Probe != "" && w.Probe != holder && now.Before(w.ProbeUntil):
			a = Admission{Wait: w.ProbeUntil.Sub(now), Probing: true}
			return w, false
		}
		next := *w
		next.Probe, next.ProbeUntil = holder, now.Add(lease)
		a = Admission{Probe: true}
		return &next, true
	})
	return a, err
}

// RateLimited opens (or extends) the window of key to now+retryAfterMs:
// the provider answered a call with a rate limit and that hint. It ends
// any probe lease (the probe has its outcome).
func (ws Windows) RateLimited(key string, retryAfterMs int64) error {
	if retryAfterMs <= 0 {
		return fmt.Errorf("rate-limit window %s: retry hint %dms is not positive", key, retryAfterMs)
	}
	return ws.Store.UpdateWindow(key, func(w *Window, now time.Time) (*Window, bool) {
		var next Window
		if w != nil {
			next = *w
		}
		if until := now.Add(time.Duration(retryAfterMs) * time.Millisecond); until.After(next.Until) {
			next.Until = until
		}
		next.Probe, next.ProbeUntil = "", time.Time{}
		return &next, true
	})
}

// Settle reports that the provider took holder's call (any answer but a
// rate limit): the window ends when holder was the probe, or when the
// window was over anyway. A call that was already under way when another
// caller's rate limit opened the window leaves it open.
func (ws Windows) Settle(key, holder string) error {
	return ws.Store.UpdateWindow(key, func(w *Window, now time.Time) (*Window, bool) {
		if w == nil || (w.Probe != holder && now.Before(w.Until)) {
			return w, false
		}
		return nil, true
	})
}

// Release gives up holder's probe lease without an outcome (its call was
// cancelled): the next caller probes.
func (ws Windows) Release(key, holder string) error {
	return ws.Store.UpdateWindow(key, func(w *Window, _ time.Time) (*Window, bool) {
		if w == nil || w.Probe != holder {
			return w, false
		}
		next := *w
		next.Probe, next.ProbeUntil = "", time.Time{}
		return &next, true
	})
}

// UpdateWindow is WindowStore's, on auth.json under the file's lock.
func (f *File) UpdateWindow(key string, rule func(w *Window, now time.Time) (*Window, bool)) error {
	return f.update(func(st *state, now time.Time) (bool, error) {
		var cur *Window
		if w, ok := st.Windows[key]; ok {
			cur = &w
		}
		next, changed := rule(cur, now)
		if !changed {
			return false, nil
		}
		if next == nil {
			delete(st.Windows, key)
		} else {
			st.Windows[key] = *next
		}
		return true, nil
	})
}
