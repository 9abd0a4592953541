package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newClock() *clock { return &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)} }

func noEnv(string) (string, bool) { return "", false }

func openTemp(t *testing.T, opts FileOptions) *File {
	t.Helper()
	if opts.Env == nil {
		opts.Env = noEnv
	}
	f, err := OpenFile(filepath.Join(t.TempDir(), FileName), opts)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mustAdd(t *testing.T, f *File, creds ...Credential) {
	t.Helper()
	for _, c := range creds {
		if err := f.Add(c); err != nil {
			t.Fatal(err)
		}
	}
}

func key(id, provider string) Credential {
	return Credential{ID: id, Provider: provider, Secret: "secret-" + id + "-0123456789"}
}

func mustSelect(t *testing.T, f *File, provider, session string) Credential {
	t.Helper()
	c, ok, err := f.Select(provider, session)
	if err != nil || !ok {
		t.Fatalf("Select(%s, %s) = %v, %v", provider, session, ok, err)
	}
	return c
}

// A session keeps the credential its id hashes to, across calls and
// store instances; different sessions spread over the credentials.
func TestSelect_StableHashKeepsSession(t *testing.T) {
	f := openTemp(t, FileOptions{})
	mustAdd(t, f, key("a", "anthropic"), key("b", "anthropic"), key("c", "anthropic"), key("o", "openai"))
	seen := map[string]bool{}
	for i := 0; i < 30; i++ {
		s := fmt.Sprintf("session-%d", i)
		first := mustSelect(t, f, "anthropic", s)
		if first.Provider != "anthropic" {
			t.Fatalf("Select gave %+v for anthropic", first)
		}
		again, err := OpenFile(f.Path(), FileOptions{Env: noEnv})
		if err != nil {
			t.Fatal(err)
		}
		if c := mustSelect(t, again, "anthropic", s); c.ID != first.ID {
			t.Fatalf("session %s moved from %s to %s", s, first.ID, c.ID)
		}
		seen[first.ID] = true
	}
	if len(seen) < 2 {
		t.Fatalf("30 sessions all hashed to %v", seen)
	}
	if _, ok, _ := f.Select("mistral", "s"); ok {
		t.Fatal("Select found a credential for a provider without one")
	}
}

// SPEC 3 step 7: a usage limit blocks the session's credential until the
// hint expires and moves the session to another unblocked one.
func TestMarkUsageLimit_SwitchesAndExpires(t *testing.T) {
	clk := newClock()
	f := openTemp(t, FileOptions{Now: clk.now})
	mustAdd(t, f, key("a", "anthropic"), key("b", "anthropic"))
	cur := mustSelect(t, f, "anthropic", "s1")

	sw, err := f.MarkUsageLimit("anthropic", "", "s1", 30_000)
	next := sw.CredentialID
	if err != nil || !sw.Switched || next == cur.ID || next == "" {
		t.Fatalf("MarkUsageLimit = %+v %v, want a switch away from %s", sw, err, cur.ID)
	}
	if c := mustSelect(t, f, "anthropic", "s1"); c.ID != next {
		t.Fatalf("session runs on %s after the switch, want %s", c.ID, next)
	}
	// The other credential hits its limit too: nothing left to switch to.
	sw, err = f.MarkUsageLimit("anthropic", "", "s1", 0)
	if err != nil || sw.Switched {
		t.Fatalf("second MarkUsageLimit = %+v %v, want no switch", sw, err)
	}
	entries, _ := f.List()
	for _, e := range entries {
		if e.Provider == "anthropic" && e.BlockedUntil.IsZero() {
			t.Fatalf("entry %+v is not blocked", e)
		}
	}
	// Past the hint (30 s) the first credential is free again; the
	// second one was blocked for the default minute.
	clk.add(31 * time.Second)
	if c := mustSelect(t, f, "anthropic", "s1"); c.ID != cur.ID {
		t.Fatalf("after the hint the session runs on %s, want %s again", c.ID, cur.ID)
	}
	clk.add(30 * time.Second)
	entries, _ = f.List()
	for _, e := range entries {
		if !e.BlockedUntil.IsZero() {
			t.Fatalf("entry %+v still blocked after the default %dms", e, DefaultBlockMs)
		}
	}
	if _, err := f.MarkUsageLimit("anthropic", "", "s1", -1); err == nil {
		t.Fatal("a negative hint was accepted")
	}
}

// Blocks and assignments are in auth.json: a restarted worker (a new
// store on the same file) sees them.
func TestFile_BlocksSurviveRestart(t *testing.T) {
	clk := newClock()
	f := openTemp(t, FileOptions{Now: clk.now})
	mustAdd(t, f, key("a", "openai"), key("b", "openai"))
	first := mustSelect(t, f, "openai", "s1")
	if _, err := f.MarkUsageLimit("openai", "", "s1", 120_000); err != nil {
		t.Fatal(err)
	}
	restarted, err := OpenFile(f.Path(), FileOptions{Now: clk.now, Env: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if c := mustSelect(t, restarted, "openai", "s1"); c.ID == first.ID {
		t.Fatalf("restarted store gave the blocked credential %s", c.ID)
	}
	entries, _ := restarted.List()
	blocked := 0
	for _, e := range entries {
		if !e.BlockedUntil.IsZero() {
			blocked++
			if want := clk.now().Add(2 * time.Minute); !e.BlockedUntil.Equal(want) {
				t.Fatalf("blocked until %v, want %v", e.BlockedUntil, want)
			}
		}
	}
	if blocked != 1 {
		t.Fatalf("%d blocked entries after restart, want 1", blocked)
	}
}

// Several stores on one file (several worker processes) serialise on the
// lock: concurrent adds and marks lose nothing.
func TestFile_ConcurrentStoresLoseNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	const workers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			f, err := OpenFile(path, FileOptions{Env: noEnv})
			if err != nil {
				errs <- err
				return
			}
			for i := 0; i < each; i++ {
				if err := f.Add(key(fmt.Sprintf("w%d-%d", w, i), "anthropic")); err != nil {
					errs <- err
				}
				if _, err := f.MarkUsageLimit("anthropic", "", fmt.Sprintf("s%d-%d", w, i), 60_000); err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	f, err := OpenFile(path, FileOptions{Env: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := f.List()
	if err != nil {
		t.Fatal(err)
	}
	blocked := 0
	for _, e := range entries {
		if !e.BlockedUntil.IsZero() {
			blocked++
		}
	}
	if len(entries) != workers*each || blocked == 0 {
		t.Fatalf("%d credentials (%d blocked), want %d with some blocked", len(entries), blocked, workers*each)
	}
}

// The file is created 0600 and a group- or world-readable one is refused.
func TestFile_Permissions(t *testing.T) {
	f := openTemp(t, FileOptions{})
	mustAdd(t, f, key("a", "anthropic"))
	info, err := os.Stat(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Fatalf("auth.json mode %#o, want 0600", perm)
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		t.Run(mode.String(), func(t *testing.T) {
			if err := os.Chmod(f.Path(), mode); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.Chmod(f.Path(), 0o600) })
			if _, err := OpenFile(f.Path(), FileOptions{Env: noEnv}); !errors.Is(err, ErrInsecureFile) || !strings.Contains(err.Error(), "chmod 600") {
				t.Fatalf("OpenFile on mode %v = %v, want ErrInsecureFile naming chmod 600", mode, err)
			}
			if _, _, err := f.Select("anthropic", "s"); !errors.Is(err, ErrInsecureFile) {
				t.Fatalf("Select on mode %v = %v, want ErrInsecureFile", mode, err)
			}
		})
	}
}

// The environment key is an implicit credential only while the store has
// none for the provider; listings never carry secrets.
func TestFile_EnvCredentialAndListWithoutSecrets(t *testing.T) {
	env := func(name string) (string, bool) {
		if name == "ANTHROPIC_API_KEY" {
			return "sk-ant-env-secret-0123456789", true
		}
		return "", false
	}
	f := openTemp(t, FileOptions{Env: env})
	c := mustSelect(t, f, "anthropic", "s1")
	if c.ID != "env:anthropic" || c.Secret != "sk-ant-env-secret-0123456789" {
		t.Fatalf("implicit credential = %+v", c)
	}
	if _, ok, _ := f.Select("openai", "s1"); ok {
		t.Fatal("openai has no key in the environment but Select found one")
	}
	stored := Credential{ID: "work", Provider: "anthropic", Kind: KindOAuth, Secret: "sk-ant-oat-stored-0123456789"}
	mustAdd(t, f, stored)
	if c := mustSelect(t, f, "anthropic", "s1"); c.ID != "work" {
		t.Fatalf("with a stored credential Select gave %s, want work", c.ID)
	}
	entries, err := f.List()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(entries)
	if strings.Contains(string(b), "sk-ant") || strings.Contains(string(b), "secret") {
		t.Fatalf("List leaks a secret: %s", b)
	}
	if len(entries) != 1 || entries[0].Kind != KindOAuth {
		t.Fatalf("entries = %+v, want the stored oauth credential only", entries)
	}
}

// Add validates; Remove deletes the credential and its assignments.
func TestFile_AddRemove(t *testing.T) {
	f := openTemp(t, FileOptions{})
	cases := []struct {
		name string
		c    Credential
	}{
		{"empty id", Credential{Provider: "openai", Secret: "x"}},
		{"bad id", Credential{ID: "a b", Provider: "openai", Secret: "x"}},
		{"no secret", Credential{ID: "a", Provider: "openai"}},
		{"no provider", Credential{ID: "a", Secret: "x"}},
		{"bad kind", Credential{ID: "a", Provider: "openai", Secret: "x", Kind: "password"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := f.Add(tc.c); err == nil {
				t.Fatalf("Add(%+v) accepted", tc.c)
			}
		})
	}
	mustAdd(t, f, key("a", "openai"))
	if err := f.Add(key("a", "openai")); err == nil {
		t.Fatal("duplicate id accepted")
	}
	mustSelect(t, f, "openai", "s1")
	if err := f.Remove("a"); err != nil {
		t.Fatal(err)
	}
	if err := f.Remove("a"); err == nil {
		t.Fatal("removing a missing credential succeeded")
	}
	b, _ := os.ReadFile(f.Path())
	if strings.Contains(string(b), `"s1"`) || strings.Contains(string(b), "secret-a") {
		t.Fatalf("auth.json still names the removed credential: %s", b)
	}
}

// retry.fallbackModels: with no credential left, the session moves to the
// next model, which counts as a switch; at the end of the list nothing is
// left.
func TestMarkUsageLimit_FallbackModels(t *testing.T) {
	f := openTemp(t, FileOptions{FallbackModels: map[string][]string{"anthropic": {"claude-b", "claude-c"}}})
	mustAdd(t, f, key("only", "anthropic"))
	cases := []struct {
		model string
		want  Switch
	}{
		{"claude-a", Switch{Switched: true, Model: "claude-b"}},
		{"claude-b", Switch{Switched: true, Model: "claude-c"}},
		{"claude-c", Switch{}},
	}
	for _, tc := range cases {
		got, err := f.MarkUsageLimit("anthropic", tc.model, "s1", 60_000)
		if err != nil || got != tc.want {
			t.Fatalf("MarkUsageLimit(model %s) = %+v, %v; want %+v", tc.model, got, err, tc.want)
		}
	}
	two := openTemp(t, FileOptions{FallbackModels: map[string][]string{"openai": {"gpt-b"}}})
	mustAdd(t, two, key("x", "openai"), key("y", "openai"))
	if sw, _ := two.MarkUsageLimit("openai", "gpt-a", "s", 0); !sw.Switched || sw.CredentialID == "" || sw.Model != "" {
		t.Fatalf("with a free credential = %+v, want a credential switch", sw)
	}
	if sw, _ := two.MarkUsageLimit("openai", "gpt-a", "s", 0); sw != (Switch{Switched: true, Model: "gpt-b"}) {
		t.Fatalf("with no credential left = %+v, want the fallback model", sw)
	}
}

// Issue 20 item 4: Secrets lists what the worker redacts tool output of:
// every stored secret and the provider variables' values, read at call
// time, so a credential another process adds (`starter auth add` while
// the worker runs) is listed at the next call, and one removed is not.
// Spec 14.4.4.
func TestFile_SecretsAreReadAtCallTime(t *testing.T) {
	env := func(name string) (string, bool) {
		if name == "ANTHROPIC_API_KEY" {
			return " sk-ant-from-env-0123456789 ", true
		}
		return "", false
	}
	f := openTemp(t, FileOptions{Env: env})
	mustAdd(t, f, Credential{ID: "a", Provider: "openai", Secret: "sk-stored-a-0123456789"})
	other, err := OpenFile(f.Path(), FileOptions{Env: noEnv}) // another process
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, other, Credential{ID: "b", Provider: "anthropic", Secret: "sk-stored-b-0123456789"})
	got, err := f.Secrets()
	want := []string{"sk-stored-a-0123456789", "sk-stored-b-0123456789", "sk-ant-from-env-0123456789"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Secrets() = %q, %v; want %q", got, err, want)
	}
	if err := other.Remove("a"); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.Secrets(); !reflect.DeepEqual(got, want[1:]) {
		t.Fatalf("after removing a: Secrets() = %q, want %q", got, want[1:])
	}
}
