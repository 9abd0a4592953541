package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/tools"
)

// Issue 22's cold and refill cases: the worker's hint that a model call
// of a workspace started (Runner.Prepare) fills the workspace's pool at
// once, in the background, so the answer's calls that follow run in
// spares: a new workspace's first call included, and without waiting
// for the quiet after the last burst (set to an hour here, so only the
// hint fills the pool). A hint for a full pool starts nothing.
func TestSandbox_PrepareFillsThePoolForTheNextAnswer(t *testing.T) {
	defer func(q time.Duration) { refillQuiet = q }(refillQuiet)
	refillQuiet = time.Hour
	r := runner(t, Config{})
	defer r.Close()
	ws := t.TempDir()
	env := []string{"PATH=/usr/bin:/bin", fmt.Sprintf("SANDBOX_PREPARE_TEST=%d-%d", os.Getpid(), time.Now().UnixNano())}
	burst := func(n int) (served, started int64) { t.Helper(); return runBurst(t, r, ws, env, n) }
	// A workspace no command ran in yet: the hint starts one spare, and
	// the answer's first call runs in it.
	start := time.Now()
	r.Prepare(ws, env)
	if d := time.Since(start); d > time.Second {
		t.Errorf("Prepare took %v: it must not wait for a sandbox's start", d)
	}
	waitSpares(t, r, 1)
	if served, started := burst(1); served != 1 || started != 0 {
		t.Fatalf("a new workspace's first call after the hint: %d ran in a spare (want 1), %d sandboxes started while it ran (want 0)", served, started)
	}
	// The next model call's hint: the pool of one is filled again.
	r.Prepare(ws, env)
	waitSpares(t, r, 1)
	// A longer answer sizes the pool: the next hint fills it to the
	// burst's size, there and then, and the next answer's calls all run
	// in spares and start none.
	burst(4)
	r.Prepare(ws, env)
	if n := r.spares.count(); n != 4 {
		t.Fatalf("after an answer of 4 calls the hint left %d spares (ready or starting), want 4", n)
	}
	waitSpares(t, r, 4)
	before := r.spares.started.Load()
	r.Prepare(ws, env)
	r.Prepare(ws, env)
	if n := r.spares.started.Load() - before; n != 0 {
		t.Fatalf("hints for a full pool started %d sandboxes, want none", n)
	}
	if served, started := burst(4); served != 4 || started != 0 {
		t.Fatalf("the answer after the hint: %d of 4 calls ran in a spare (want 4), %d sandboxes started while they ran (want 0)", served, started)
	}
	// The pool's bound holds: an answer of 12 calls, then a hint, fills
	// maxPerKey spares.
	r.Prepare(ws, env)
	burst(12)
	r.Prepare(ws, env)
	if n := r.spares.count(); n != maxPerKey {
		t.Fatalf("after an answer of 12 calls the hint left %d spares, want the bound %d", n, maxPerKey)
	}
	waitSpares(t, r, maxPerKey)
}

// A hint starts nothing where no spare would serve a command: a path that
// is not a directory, a runner that starts no spares
// (tools.sandbox AheadIdle negative), a workspace with a command running
// (the pool is filled after it); the runner's bound holds across
// workspaces.
func TestSandbox_PrepareStartsNothingItShouldNot(t *testing.T) {
	defer func(q time.Duration) { refillQuiet = q }(refillQuiet)
	refillQuiet = time.Hour
	env := []string{"PATH=/usr/bin:/bin"}
	r := runner(t, Config{})
	defer r.Close()
	missing := filepath.Join(t.TempDir(), "gone")
	r.Prepare(missing, env)
	if n := r.spares.started.Load(); n != 0 {
		t.Fatalf("a hint for a missing workspace started %d sandboxes", n)
	}
	none := runner(t, Config{AheadIdle: -1})
	defer none.Close()
	none.Prepare(t.TempDir(), env)
	if n := none.spares.started.Load(); n != 0 {
		t.Fatalf("a hint to a runner that starts no spares started %d sandboxes", n)
	}

	ws := t.TempDir()
	var out bytes.Buffer
	p, err := r.Start(tools.Command{Script: "sleep 30", Dir: ws, Env: env, Output: &out})
	if err != nil {
		t.Fatal(err)
	}
	before := r.spares.started.Load()
	r.Prepare(ws, env)
	if n := r.spares.started.Load() - before; n != 0 {
		t.Errorf("a hint while a command of the workspace runs started %d sandboxes, want none", n)
	}
	p.Kill()
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}

	for i := 0; i < maxSpares+4; i++ {
		r.Prepare(t.TempDir(), env)
	}
	if n := r.spares.count(); n != maxSpares {
		t.Fatalf("hints for %d new workspaces left %d spares, want the runner's bound %d", maxSpares+4, n, maxSpares)
	}
	waitSpares(t, r, maxSpares)
}
