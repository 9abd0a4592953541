package activities_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
)

// backoffWorker is newCredsWorker with the credentials' windows wired as
// the worker wires them (internal/app: Windows is the auth store).
func backoffWorker(t *testing.T) *credsWorker {
	t.Helper()
	s := settings.Defaults()
	s.Model.Provider = "anthropic"
	return newCredsWorkerWith(t, s, func(a *activities.Activities) { a.Windows = a.Credentials.(activities.RateWindows) },
		auth.Credential{ID: "work", Provider: "anthropic", Secret: "sk-ant-api03-BACKOFF0123456789abcdef"})
}

func (w *credsWorker) call(t *testing.T, sessionID string, faults ...string) activities.CallModelResult {
	t.Helper()
	return w.callOn(t, w.env, sessionID, faults...)
}

// callOn is call on env (concurrent calls each take an environment of
// their own: credsWorker.fresh).
func (w *credsWorker) callOn(t *testing.T, env *testsuite.TestActivityEnvironment, sessionID string, faults ...string) activities.CallModelResult {
	t.Helper()
	user := agent.TextMessage(agent.RoleUser, "hello")
	if _, err := w.store.Append(sessionID, session.Entry{Type: session.TypeMessage, ID: "u1", Timestamp: time.Now(), Message: &user}); err != nil {
		t.Fatal(err)
	}
	v, err := env.ExecuteActivity(activities.CallModelName, activities.CallModelInput{
		SessionID: sessionID, LeafID: "u1", EntryID: "a1",
		Model: activities.ModelRef{Provider: "anthropic", Name: "claude-a", Faults: faults},
	})
	if err != nil {
		t.Fatalf("CallModel(%s): %v", sessionID, err)
	}
	var res activities.CallModelResult
	if err := v.Get(&res); err != nil {
		t.Fatal(err)
	}
	return res
}

// Spec 18.1: a rate-limited answer with a retry hint opens the
// credential's window; the next call of another session on that
// credential holds until the hint expires, then goes out (it probes) and
// its success clears the window, so the call after it is not held.
func TestCallModel_HoldsForTheCredentialsRateLimitWindow(t *testing.T) {
	w := backoffWorker(t)
	first := w.call(t, "s1", "[429 rate_limit_error] Too many requests, retry after 1 seconds")
	if first.StopReason != agent.StopReasonError || first.HeldMs != 0 {
		t.Fatalf("first call = %+v, want the scripted 429, not held", first)
	}
	entries, err := w.creds.List()
	if err != nil || len(entries) != 1 || entries[0].RateLimitedUntil.IsZero() {
		t.Fatalf("after the 429 the credential is %+v (%v), want a rate-limit window", entries, err)
	}
	start := time.Now()
	second := w.call(t, "s2")
	if second.StopReason != agent.StopReasonStop || second.HeldMs < 700 || time.Since(start) < 700*time.Millisecond {
		t.Fatalf("second call = %+v after %v, want an answer after holding ~1s", second, time.Since(start))
	}
	if third := w.call(t, "s3"); third.HeldMs != 0 {
		t.Fatalf("third call held %dms after the probe's success cleared the window", third.HeldMs)
	}
}

// While a probe is out, the other callers keep holding: of several calls
// waiting out a window, exactly one reaches the provider before the
// probe's outcome, and when it meets the limit again the others hold for
// the new hint.
func TestCallModel_OneProbePerWindow(t *testing.T) {
	w := backoffWorker(t)
	key := auth.WindowKey("anthropic", "work")
	if err := w.creds.RateLimited(key, 300); err != nil {
		t.Fatal(err)
	}
	const n = 5
	var wg sync.WaitGroup
	results := make([]activities.CallModelResult, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		env := w.fresh()
		go func(i int) {
			defer wg.Done()
			// Every call's script is a rate limit: only the probes reach
			// the provider during the windows (each 429 re-opens one).
			results[i] = w.callOn(t, env, fmt.Sprintf("p%d", i), "[429 rate_limit_error] Too many requests, retry after 1 seconds")
		}(i)
	}
	wg.Wait()
	// The calls go out one per window: each one's 429 opens the next 1s
	// window, so the holds are a second apart.
	held := make([]int64, 0, n)
	for _, r := range results {
		if r.StopReason != agent.StopReasonError {
			t.Fatalf("result %+v, want the scripted 429", r)
		}
		held = append(held, r.HeldMs)
	}
	slices.Sort(held)
	for i := 1; i < n; i++ {
		if held[i]-held[i-1] < 900 {
			t.Fatalf("holds %v (ms): two calls went out within one 1s window", held)
		}
	}
}

// slowWindows is the worker's own window store with a round trip as slow
// as a loaded machine's (or a cluster's database's).
type slowWindows struct {
	activities.RateWindows
	delay time.Duration
}

func (s slowWindows) Admit(key, holder string, lease time.Duration) (auth.Admission, error) {
	time.Sleep(s.delay)
	return s.RateWindows.Admit(key, holder, lease)
}

// Spec 18.1 (heldMs): a call that no window held reports no hold, however
// long the store took to say so: HeldMs counts the waiting a window
// caused, which the fleet trace counts as rate-limit holds.
func TestCallModel_StoreRoundTripIsNotAHold(t *testing.T) {
	s := settings.Defaults()
	s.Model.Provider = "anthropic"
	w := newCredsWorkerWith(t, s, func(a *activities.Activities) {
		a.Windows = slowWindows{a.Credentials.(activities.RateWindows), 20 * time.Millisecond}
	}, auth.Credential{ID: "work", Provider: "anthropic", Secret: "sk-ant-api03-BACKOFF0123456789abcdef"})
	if res := w.call(t, "s1"); res.StopReason != agent.StopReasonStop || res.HeldMs != 0 {
		t.Fatalf("call with no window open = %+v, want an answer with HeldMs 0", res)
	}
}
