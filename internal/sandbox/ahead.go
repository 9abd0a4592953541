package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A sandbox costs more to start than the command `bash true` runs in it
// (bwrap's own start, its namespaces and mounts: docs/security.md,
// Cost). So the runner starts the sandboxes of a workspace's next
// commands ahead: spares, started with the same arguments and
// environment a new sandbox would get (with network allowlist, each its
// own egress proxy too), whose shell waits for its script. Each is fresh
// all the same: nothing ran in it before its command.
//
// The spares of one command line and environment (a key) are a pool
// sized from the last burst: the commands that ran one after another
// with less than refillQuiet between them (the tool calls of one
// answer), at most maxPerKey. A burst takes spares without starting new
// ones, so that no sandbox start takes CPU from its own commands; one
// longer than the last finds the pool empty, and then each of its
// commands starts the next spare as it comes. When no command of the key
// has run for refillQuiet (the answer's calls are done and the model's
// turn has begun), the pool is filled up to the burst's size again, and
// spares beyond it are ended; Runner.Prepare (the worker's hint that a
// model call of the workspace started) fills it at once. A spare that
// waits longer than Config.AheadIdle is ended; a command for the same
// workspace with another key (its settings or environment changed) ends
// that workspace's spares of other keys; the runner keeps at most
// maxSpares in all, and Runner.Close ends them.

// maxPerKey bounds the spares of one workspace and environment: the
// longest burst the pool is sized for. (With 4, the fifth call of an
// answer of five waited for a sandbox started as it came, and cost 3-4
// times the others: bench/RESULTS.md, Sandbox cost.)
const maxPerKey = 8

// maxSpares bounds the spares of a runner, all keys together.
const maxSpares = 16

// refillQuiet is how long no command of a key must have run before its
// pool is filled again: longer than the gap between two tool calls of
// one answer (the workflow scheduling the next activity), shorter than
// a model's turn. (A variable: tests set it longer, to tell a fill by
// Runner.Prepare from one after the quiet.)
var refillQuiet = 100 * time.Millisecond

// defaultAheadIdle is how long a spare waits when Config.AheadIdle is 0.
const defaultAheadIdle = time.Minute

// callDir is where a spare's script appears in the sandbox.
const callDir = "/run/call"

// aheadCall is how a spare gets its script: the worker writes it to a
// file in a directory of its own, bound read-only at callDir, then a
// line to the sandbox's stdin, which its shell waits on.
type aheadCall struct {
	dir            string
	stdinR, stdinW *os.File
}

func newAheadCall() (*aheadCall, error) {
	dir, err := os.MkdirTemp("", "sandbox-call-")
	if err != nil {
		return nil, fmt.Errorf("sandbox started ahead: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox started ahead: %w", err)
	}
	return &aheadCall{dir: dir, stdinR: r, stdinW: w}, nil
}

// reader is the spare's command: wait for the line, then run the script
// as a new sandbox runs it (`bash -c script`, stdin /dev/null).
func (a *aheadCall) reader() string {
	return `IFS= read -r _ || exit 125; exec ` + shell() + ` -c "$(<` + callDir + `/script)" </dev/null`
}

// bind adds the call directory to a bwrap command line.
func (a *aheadCall) bind(args []string) []string {
	for i, v := range args {
		if v == "--" {
			return append(append(append([]string{}, args[:i]...), "--ro-bind", a.dir, callDir), args[i:]...)
		}
	}
	return args
}

// started closes the worker's copy of the read end (bwrap has its own).
func (a *aheadCall) started() {
	if a != nil {
		a.stdinR.Close()
	}
}

// run gives the spare its script.
func (a *aheadCall) run(script string) error {
	if err := os.WriteFile(filepath.Join(a.dir, "script"), []byte(script), 0o644); err != nil {
		return err
	}
	_, err := a.stdinW.Write([]byte("\n"))
	a.stdinW.Close()
	return err
}

// remove closes the pipe and removes the call directory, once the
// sandbox has ended or did not start.
func (a *aheadCall) remove() {
	if a != nil {
		a.stdinR.Close()
		a.stdinW.Close()
		os.RemoveAll(a.dir)
	}
}

// spares are a runner's sandboxes started ahead, in pools by key.
type spares struct {
	mu     sync.Mutex
	pools  map[string]*pool
	n      int  // spares in all pools, ready or being started
	closed bool // Runner.Close: none are started any more
	// ending counts the spares being ended, which Close waits for.
	ending sync.WaitGroup
	// served counts the commands a spare ran, started the spares
	// started (tests, benchmarks).
	served, started atomic.Int64
}

// pool is the spares of one key and what sizes it.
type pool struct {
	dir     string   // the workspace, as the commands name it
	env     []string // their environment
	spares  []*spare // oldest first
	running int      // commands of the key running
	burst   int      // commands since the key was last quiet
	want    int      // the pool's size: the last burst's, 1..Runner.maxPerKey
	refill  *time.Timer
}

// spare is one sandbox started ahead; p is set, or left nil when it
// could not start, before ready is closed. Whoever removes it from its
// pool owns it: waits for ready, then runs a command in p or ends it.
type spare struct {
	ready chan struct{}
	p     *process
}

// key is what a spare must share with a command to run it: the bwrap
// command line but for the script, and the environment.
func (r *Runner) key(dir string, env []string) (string, bool) {
	args, err := r.cfg.args(dir, "", "", "")
	if err != nil {
		return "", false
	}
	return strings.Join(args, "\x00") + "\x00\x00" + strings.Join(env, "\x00"), true
}

// maxPerKey is maxPerKey, or 1 where tools.sandbox.maxProcesses falls
// back to RLIMIT_NPROC: that limit counts every process of the worker's
// user, idle spares' too, so the runner keeps as few as it did before
// pools.
func (r *Runner) maxPerKey() int {
	if r.cfg.MaxProcesses > 0 && r.pids == "" {
		return 1
	}
	return maxPerKey
}

// aheadIdle is how long a spare waits; negative: none are started.
func (r *Runner) aheadIdle() time.Duration {
	if r.cfg.AheadIdle == 0 {
		return defaultAheadIdle
	}
	return r.cfg.AheadIdle
}

// begin counts a command for dir and env as running and returns its key
// ("" when no spare can serve it) and the spare it runs in: nil when
// there is none, it ended, or dir is another directory than the one it
// has bound. A spare still being started is waited for: its start is
// under way, so it is ready sooner than a new one. Taking the pool's
// last spare starts the next one. The caller calls end(key) when the
// command has ended.
func (s *spares) begin(r *Runner, dir string, env []string) (string, *process) {
	if r.aheadIdle() < 0 {
		return "", nil
	}
	k, ok := r.key(dir, env)
	if !ok {
		return "", nil
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return "", nil
	}
	stale := s.staleOf(k, dir)
	pl := s.poolOf(k, dir, env)
	pl.running++
	pl.burst++
	if pl.refill != nil {
		pl.refill.Stop()
		pl.refill = nil
	}
	var sp *spare
	if len(pl.spares) > 0 {
		sp = pl.spares[0]
		pl.spares = pl.spares[1:]
		s.n--
	}
	if len(pl.spares) == 0 && pl.burst > pl.want {
		// The burst outruns the pool: its next command finds one. (A
		// burst no longer than the last leaves the start to fill, after
		// it: no start takes CPU from its commands.)
		s.start(r, k, pl)
	}
	s.mu.Unlock()
	s.end(stale...)
	if sp == nil {
		return k, nil
	}
	<-sp.ready
	p := sp.p
	if p == nil {
		return k, nil
	}
	if p.idle != nil {
		p.idle.Stop()
	}
	select {
	case <-p.waited:
		p.discard()
		return k, nil
	default:
	}
	if now, err := os.Stat(dir); err != nil || p.ws == nil || !os.SameFile(p.ws, now) {
		// The path names another directory now: the spare has the old
		// one bound (each spare is checked as it is taken).
		p.discard()
		return k, nil
	}
	s.served.Add(1)
	return k, p
}

// staleOf removes the spares of workspace dir of keys other than k
// from their pools, which would serve none of its commands now (its
// settings or environment changed), and returns them, counted in
// s.ending, for end; s.mu is held.
func (s *spares) staleOf(k, dir string) []*spare {
	var stale []*spare
	for ko, o := range s.pools {
		if ko != k && o.dir == dir && len(o.spares) > 0 {
			stale = append(stale, o.spares...)
			s.ending.Add(len(o.spares))
			s.n -= len(o.spares)
			o.spares = nil
			s.forget(ko, o)
		}
	}
	return stale
}

// poolOf is the pool of key k, a new one (sized 1) if there is none;
// s.mu is held.
func (s *spares) poolOf(k, dir string, env []string) *pool {
	pl := s.pools[k]
	if pl == nil {
		if s.pools == nil {
			s.pools = map[string]*pool{}
		}
		pl = &pool{dir: dir, env: env, want: 1}
		s.pools[k] = pl
	}
	return pl
}

// prepare is Runner.Prepare: it fills the pool of dir and env now, as
// the refill after refillQuiet would, unless a command of it runs (the
// refill after the burst sizes it then). The spares start in the
// background; a full pool starts none.
func (s *spares) prepare(r *Runner, dir string, env []string) {
	if r.aheadIdle() < 0 {
		return
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return
	}
	k, ok := r.key(dir, env)
	if !ok {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	stale := s.staleOf(k, dir)
	pl := s.poolOf(k, dir, env)
	var extra []*spare
	if pl.running == 0 {
		if pl.refill != nil {
			pl.refill.Stop()
			pl.refill = nil
		}
		extra = s.size(r, k, pl)
	}
	s.mu.Unlock()
	s.end(stale...)
	s.end(extra...)
}

// done counts a command of key k (begin's) as ended; when none of the
// key runs for refillQuiet, its pool is filled again.
func (s *spares) done(r *Runner, k string) {
	if k == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	pl := s.pools[k]
	if pl == nil {
		return
	}
	if pl.running--; pl.running > 0 || s.closed {
		return
	}
	if pl.refill != nil {
		pl.refill.Stop()
	}
	pl.refill = time.AfterFunc(refillQuiet, func() { s.fill(r, k, pl) })
}

// fill sizes pool pl of key k after a burst: up to the burst's size
// (at most Runner.maxPerKey; maxSpares in all), ending spares beyond it.
func (s *spares) fill(r *Runner, k string, pl *pool) {
	s.mu.Lock()
	if s.pools[k] != pl || pl.running > 0 || s.closed {
		s.mu.Unlock()
		return
	}
	pl.refill = nil
	extra := s.size(r, k, pl)
	s.mu.Unlock()
	s.end(extra...)
}

// size sizes pool pl of key k, whose commands are done: its size is the
// last burst's (at most Runner.maxPerKey), it is filled up to that
// (maxSpares in all), and the spares beyond it are returned, counted in
// s.ending, for end; s.mu is held.
func (s *spares) size(r *Runner, k string, pl *pool) []*spare {
	if pl.burst > 0 {
		pl.want = min(pl.burst, r.maxPerKey())
		pl.burst = 0
	}
	var extra []*spare
	if n := len(pl.spares) - pl.want; n > 0 {
		extra = pl.spares[len(pl.spares)-n:]
		pl.spares = pl.spares[:len(pl.spares)-n]
		s.n -= n
		s.ending.Add(n)
	}
	for len(pl.spares) < pl.want && s.start(r, k, pl) {
	}
	s.forget(k, pl)
	return extra
}

// start starts, in the background, one more spare in pool pl of key k
// unless there are maxSpares or the runner is closed; s.mu is held.
func (s *spares) start(r *Runner, k string, pl *pool) bool {
	if s.closed || s.n >= maxSpares {
		return false
	}
	sp := &spare{ready: make(chan struct{})}
	pl.spares = append(pl.spares, sp)
	s.n++
	s.started.Add(1)
	go func() {
		a, err := newAheadCall()
		var p *process
		if err == nil {
			if p, err = r.launch(pl.dir, pl.env, "", a); err != nil {
				a.remove()
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		defer close(sp.ready)
		sp.p = p
		switch there := slices.Contains(pl.spares, sp); {
		case !there:
			// Taken, or removed to be ended, meanwhile: its owner's.
		case p == nil:
			s.take(pl, sp)
			s.n--
			s.forget(k, pl)
		default:
			p.idle = time.AfterFunc(r.aheadIdle(), func() {
				s.mu.Lock()
				mine := s.take(pl, sp)
				if mine {
					s.n--
					s.ending.Add(1)
					s.forget(k, pl)
				}
				s.mu.Unlock()
				if mine {
					s.end(sp)
				}
			})
		}
	}()
	return true
}

// take removes sp from pool pl, reporting whether it was there (then
// the caller owns it); s.mu is held.
func (s *spares) take(pl *pool, sp *spare) bool {
	if i := slices.Index(pl.spares, sp); i >= 0 {
		pl.spares = slices.Delete(pl.spares, i, i+1)
		return true
	}
	return false
}

// forget drops pool pl of key k when it holds nothing: no spare, no
// command running, no fill due; s.mu is held.
func (s *spares) forget(k string, pl *pool) {
	if len(pl.spares) == 0 && pl.running == 0 && pl.refill == nil && s.pools[k] == pl {
		delete(s.pools, k)
	}
}

// end ends spares removed from their pools, in the background; Close
// waits for them. The caller added them to s.ending while it held s.mu,
// so that none is added once Close waits.
func (s *spares) end(sps ...*spare) {
	for _, sp := range sps {
		go func() {
			defer s.ending.Done()
			<-sp.ready
			if p := sp.p; p != nil {
				if p.idle != nil {
					p.idle.Stop()
				}
				p.discard()
			}
		}()
	}
}

// close ends every spare, those still being started included, starts
// none after, and returns when they are gone.
func (s *spares) close() {
	s.mu.Lock()
	s.closed = true
	var all []*spare
	for _, pl := range s.pools {
		all = append(all, pl.spares...)
		s.ending.Add(len(pl.spares))
		pl.spares = nil
		if pl.refill != nil {
			pl.refill.Stop()
			pl.refill = nil
		}
	}
	s.pools = nil
	s.n = 0
	s.mu.Unlock()
	s.end(all...)
	s.ending.Wait()
}

// count is the spares of all pools, ready or being started (tests).
func (s *spares) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// discard ends a spare that runs no command.
func (p *process) discard() {
	p.Kill()
	<-p.waited
	p.out.Close()
}
