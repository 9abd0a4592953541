package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A sandbox costs more to start than the command `bash true` runs in it
// (bwrap's own start, its namespaces and mounts: docs/security.md,
// Cost). So the runner starts the sandbox of a workspace's next command
// ahead: a spare, started with the same arguments and environment a new
// sandbox would get (with network allowlist, its own egress proxy too),
// whose shell waits for its script. It is fresh all the same: nothing ran
// in it before its command. The next spare is started as soon as a
// command takes one (or starts a sandbox of its own), so that commands
// run one after another without a model turn between them (several tool
// calls of one answer) find one too, and again when a command has ended.
// A spare that waits longer than Config.AheadIdle is ended; the runner
// keeps at most one per workspace and environment, and maxSpares in all;
// Runner.Close ends them.

// maxSpares bounds the sandboxes waiting at once (one per workspace and
// environment in use).
const maxSpares = 4

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

// spares are a runner's sandboxes started ahead, by key.
type spares struct {
	mu     sync.Mutex
	m      map[string]*spare
	closed bool // Runner.Close: none are started any more
	// served counts the commands a spare ran (tests, benchmarks).
	served atomic.Int64
}

// spare is one sandbox started ahead; p is set, or left nil when it
// could not start, before ready is closed.
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

// aheadIdle is how long a spare waits; negative: none are started.
func (r *Runner) aheadIdle() time.Duration {
	if r.cfg.AheadIdle == 0 {
		return defaultAheadIdle
	}
	return r.cfg.AheadIdle
}

// take removes and returns the spare for dir and env, nil when there is
// none, it ended, or dir is another directory than the one it has bound.
// A spare still being started is waited for: its
// start is under way, so it is ready sooner than a new one.
func (s *spares) take(r *Runner, dir string, env []string) *process {
	if r.aheadIdle() < 0 {
		return nil
	}
	k, ok := r.key(dir, env)
	if !ok {
		return nil
	}
	s.mu.Lock()
	sp := s.m[k]
	if sp != nil {
		delete(s.m, k)
	}
	s.mu.Unlock()
	if sp == nil {
		return nil
	}
	<-sp.ready
	p := sp.p
	if p == nil {
		return nil
	}
	p.idle.Stop()
	select {
	case <-p.waited:
		p.discard()
		return nil
	default:
	}
	if now, err := os.Stat(dir); err != nil || p.ws == nil || !os.SameFile(p.ws, now) {
		// The path names another directory now: the spare has the old
		// one bound.
		p.discard()
		return nil
	}
	s.served.Add(1)
	p.next = true
	return p
}

// prepare starts, in the background, a spare for dir and env unless
// there is one, or maxSpares, or the runner is closed.
func (s *spares) prepare(r *Runner, dir string, env []string) {
	if r == nil || r.aheadIdle() < 0 {
		return
	}
	k, ok := r.key(dir, env)
	if !ok {
		return
	}
	s.mu.Lock()
	if _, there := s.m[k]; there || len(s.m) >= maxSpares || s.closed {
		s.mu.Unlock()
		return
	}
	if s.m == nil {
		s.m = map[string]*spare{}
	}
	sp := &spare{ready: make(chan struct{})}
	s.m[k] = sp
	s.mu.Unlock()
	go func() {
		a, err := newAheadCall()
		var p *process
		if err == nil {
			if p, err = r.launch(dir, env, "", a); err != nil {
				a.remove()
			}
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		defer close(sp.ready)
		if err != nil {
			if s.m[k] == sp {
				delete(s.m, k)
			}
			return
		}
		sp.p = p
		// Taken or closed meanwhile: whoever took it stops the timer.
		p.idle = time.AfterFunc(r.aheadIdle(), func() {
			s.mu.Lock()
			mine := s.m[k] == sp
			if mine {
				delete(s.m, k)
			}
			s.mu.Unlock()
			if mine {
				p.discard()
			}
		})
	}()
}

// close ends every spare, those still being started included, and starts
// none after.
func (s *spares) close() {
	s.mu.Lock()
	s.closed = true
	m := s.m
	s.m = nil
	s.mu.Unlock()
	for _, sp := range m {
		<-sp.ready
		if sp.p != nil {
			sp.p.idle.Stop()
			sp.p.discard()
		}
	}
}

// discard ends a spare that runs no command.
func (p *process) discard() {
	p.Kill()
	<-p.waited
	p.out.Close()
}
