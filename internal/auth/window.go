package auth

import (
	"fmt"
	"strings"
	"time"
)

// Rate-limit windows coordinate the backoff of every caller of one
// credential (SPEC 18.1): when a provider answers a call with a rate limit
// and a retry hint, the credential's window stays open until the hint
// expires, and callers hold their next call until then instead of each
// finding the limit with a failed call of its own. When the window ends,
// one caller gets the probe lease and makes its call; the others keep
// holding until the probe's outcome extends the window (another rate
// limit) or clears it (the provider took the call). A probe whose caller
// dies frees its lease after the lease time, so at most about one call
// per window reaches a limited credential.

// Window is the rate-limit window of one credential.
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

// staleWindow is how long after its end a window nobody probed is kept:
// past it the credential is presumed free again (pruned).
const staleWindow = 5 * time.Minute

// WindowKey is the key of the window of a provider's credential; id ""
// is a provider called without a credential (a local server, the
// scripted fake), whose callers share one window.
func WindowKey(provider, credentialID string) string {
	if credentialID == "" {
		credentialID = "-"
	}
	return provider + "/" + credentialID
}

func checkWindowArgs(key, holder string) error {
	if key == "" || !strings.Contains(key, "/") {
		return fmt.Errorf("rate-limit window: bad key %q (want provider/credential, see WindowKey)", key)
	}
	if holder == "" {
		return fmt.Errorf("rate-limit window %s: empty holder", key)
	}
	return nil
}

// admit answers a caller asking to call through the window of key. It
// reports whether the state changed (a lease was granted).
func (s *state) admit(key, holder string, lease time.Duration, now time.Time) (Admission, bool) {
	s.init()
	w, ok := s.Windows[key]
	if !ok {
		return Admission{}, false
	}
	if now.Before(w.Until) {
		return Admission{Wait: w.Until.Sub(now)}, false
	}
	if w.Probe != "" && w.Probe != holder && now.Before(w.ProbeUntil) {
		return Admission{Wait: w.ProbeUntil.Sub(now), Probing: true}, false
	}
	w.Probe, w.ProbeUntil = holder, now.Add(lease)
	s.Windows[key] = w
	return Admission{Probe: true}, true
}

// rateLimited opens or extends the window of key to now+retryAfterMs and
// ends any probe lease (the probe has its outcome).
func (s *state) rateLimited(key string, retryAfterMs int64, now time.Time) error {
	if retryAfterMs <= 0 {
		return fmt.Errorf("rate-limit window %s: retry hint %dms is not positive", key, retryAfterMs)
	}
	s.init()
	w := s.Windows[key]
	if until := now.Add(time.Duration(retryAfterMs) * time.Millisecond); until.After(w.Until) {
		w.Until = until
	}
	w.Probe, w.ProbeUntil = "", time.Time{}
	s.Windows[key] = w
	return nil
}

// settle records that the provider took holder's call: the window ends
// when holder was the probe, or when the window was over anyway. A call
// that was already under way when another caller's rate limit opened
// the window leaves it open. It reports whether the state changed.
func (s *state) settle(key, holder string, now time.Time) bool {
	s.init()
	w, ok := s.Windows[key]
	if !ok || (w.Probe != holder && now.Before(w.Until)) {
		return false
	}
	delete(s.Windows, key)
	return true
}

// release gives up holder's probe lease without an outcome (its call was
// cancelled): the next caller probes. It reports whether the state
// changed.
func (s *state) release(key, holder string) bool {
	s.init()
	w, ok := s.Windows[key]
	if !ok || w.Probe != holder {
		return false
	}
	w.Probe, w.ProbeUntil = "", time.Time{}
	s.Windows[key] = w
	return true
}

// pruneWindows drops windows that ended staleWindow ago with no live
// probe lease.
func (s *state) pruneWindows(now time.Time) {
	for key, w := range s.Windows {
		if now.Sub(w.Until) > staleWindow && !now.Before(w.ProbeUntil) {
			delete(s.Windows, key)
		}
	}
}

// Admit asks to make a call on the credential of key (WindowKey) as
// holder (a stable id of the call, the same on every ask). With no
// window open it answers call now; during a window, hold for Wait; when
// the window is over, the first caller gets the probe lease for lease
// and calls, the others hold until the lease ends or is settled.
func (f *File) Admit(key, holder string, lease time.Duration) (a Admission, err error) {
	if err := checkWindowArgs(key, holder); err != nil {
		return Admission{}, err
	}
	err = f.update(func(st *state, now time.Time) (bool, error) {
		var changed bool
		a, changed = st.admit(key, holder, lease, now)
		return changed, nil
	})
	return a, err
}

// RateLimited opens (or extends) the window of key for retryAfterMs:
// the provider answered a call with a rate limit and that hint.
func (f *File) RateLimited(key string, retryAfterMs int64) error {
	return f.update(func(st *state, now time.Time) (bool, error) {
		err := st.rateLimited(key, retryAfterMs, now)
		return err == nil, err
	})
}

// Settle reports that the provider took holder's call (any answer but a
// rate limit): a probe's success ends the window.
func (f *File) Settle(key, holder string) error {
	return f.update(func(st *state, now time.Time) (bool, error) {
		return st.settle(key, holder, now), nil
	})
}

// Release gives up holder's probe lease without an outcome.
func (f *File) Release(key, holder string) error {
	return f.update(func(st *state, now time.Time) (bool, error) {
		return st.release(key, holder), nil
	})
}

// Admit is File.Admit in memory.
func (m *Memory) Admit(key, holder string, lease time.Duration) (Admission, error) {
	if err := checkWindowArgs(key, holder); err != nil {
		return Admission{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	a, _ := m.st.admit(key, holder, lease, m.now())
	return a, nil
}

// RateLimited is File.RateLimited in memory.
func (m *Memory) RateLimited(key string, retryAfterMs int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.st.rateLimited(key, retryAfterMs, m.now())
}

// Settle is File.Settle in memory.
func (m *Memory) Settle(key, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.st.settle(key, holder, m.now())
	return nil
}

// Release is File.Release in memory.
func (m *Memory) Release(key, holder string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.st.release(key, holder)
	return nil
}
