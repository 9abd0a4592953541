// Package testserver is the one harness of the tests that need a Temporal
// server: one embedded server (internal/devserver, SQLite, no Web UI) per
// test binary, started on the first test that asks for it and stopped by
// Main after the package's tests; and one WaitFor. Tests share the server
// and isolate themselves with their own task queue and data dir
// (Queue, t.TempDir). A test of durability across a server restart stops the
// shared server (Stop) and the next Address starts it again, same port,
// same state; tests of one binary run one at a time unless they say
// t.Parallel, which such a test must not.
//
// Every call that needs the server skips the test under -short.
package testserver

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/devserver"
	"github.com/durableagent/durableagent/internal/settings"
)

// startTimeout bounds a server start (a cold start on 2 busy cores takes
// seconds, SQLite schema included).
const startTimeout = 3 * time.Minute

var shared struct {
	mu   sync.Mutex
	dir  string
	port int // kept across Stop, so a restart serves the same address
	srv  *devserver.Server
}

// Main runs the package's tests and stops the shared server after them:
// a package's TestMain is `os.Exit(testserver.Main(m))`, or calls it
// after its own child modes.
func Main(m *testing.M) int {
	code := m.Run()
	Stop()
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
	return code
}

// Address is the frontend address (host:port) of the package's shared
// server (see Server); its namespace is devserver.DefaultNamespace.
func Address(t testing.TB) string {
	t.Helper()
	return Server(t).FrontendAddress()
}

// Server is the package's shared server, started on first use and again
// after Stop (on the same port, with the same state).
func Server(t testing.TB) *devserver.Server {
	t.Helper()
	SkipShort(t)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv == nil {
		var err error
		if shared.dir == "" {
			if shared.dir, err = os.MkdirTemp("", "testserver-"); err != nil {
				t.Fatal(err)
			}
		}
		if shared.srv, err = start(shared.dir, shared.port); err != nil {
			t.Fatalf("start the shared embedded Temporal server: %v", err)
		}
		_, port, _ := net.SplitHostPort(shared.srv.FrontendAddress())
		shared.port, _ = strconv.Atoi(port)
	}
	return shared.srv
}

// Stop stops the shared server (a test of durability across a server
// restart; the next Address starts it again). Stopping a server that does
// not run is a no-op.
func Stop() error {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.srv == nil {
		return nil
	}
	err := shared.srv.Stop()
	shared.srv = nil
	return err
}

func start(dir string, port int) (*devserver.Server, error) {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	return devserver.Start(ctx, devserver.Options{
		DataDir: filepath.Join(dir, "temporal"), Port: port, UIPort: devserver.NoUI, Logger: Quiet(),
	})
}

var queueSeq atomic.Int64

// Queue is a task queue name no other test of the binary uses.
func Queue(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), queueSeq.Add(1))
}

// Session is base the first time the test binary asks for it and base.r2,
// base.r3 … after, so a test run again (go test -count=N) meets no session
// of its earlier round on the shared server or in a shared data dir. (A
// dot, not a dash: tests name related sessions base-2.)
func Session(base string) string {
	sessions.Lock()
	defer sessions.Unlock()
	sessions.n[base]++
	if n := sessions.n[base]; n > 1 {
		return fmt.Sprintf("%s.r%d", base, n)
	}
	return base
}

var sessions = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

// WaitFor polls cond every 20 ms until it holds, and fails the test
// naming what it waited for once timeout has passed.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// SkipShort skips the test under -short: it needs the embedded server.
func SkipShort(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the embedded Temporal server")
	}
}

// Quiet is a logger that drops everything (the server's and the SDK's
// logs in tests).
func Quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// WaitEvent polls the events query of session through k until an event
// matches, and returns it; the test fails once timeout has passed.
func WaitEvent(t testing.TB, k *client.Controller, session string, timeout time.Duration, match func(agent.Event) bool) agent.Event {
	t.Helper()
	var found agent.Event
	WaitFor(t, timeout, "a matching event in session "+session, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		evs, err := k.Events(ctx, session, "", 0)
		for _, ev := range evs {
			if err == nil && match(ev) {
				found = ev
				return true
			}
		}
		return false
	})
	return found
}

// SetEnv makes vars the starter's part of the process environment for
// the rest of t, which the settings (viper), the Temporal client profile
// and the auth store read: DURABLE_AGENT_* and TEMPORAL_* variables that
// vars lacks are unset, so an earlier call's or the developer's do not
// leak in. It is how a test gives the in-process starter (cli.Main) its
// environment; t must not be parallel.
func SetEnv(t testing.TB, vars map[string]string) {
	t.Helper()
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if _, ok := vars[name]; !ok && (strings.HasPrefix(name, settings.EnvPrefix) || strings.HasPrefix(name, "TEMPORAL_")) {
			t.Setenv(name, "") // restored when t ends
			os.Unsetenv(name)
		}
	}
	for k, v := range vars {
		t.Setenv(k, v)
	}
}
