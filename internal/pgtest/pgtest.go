// Package pgtest starts a throwaway PostgreSQL server for tests: a fresh
// cluster made by initdb in a temporary directory, listening on a free
// loopback port, with its unix socket inside that directory, removed when
// the test ends. Running as root (CI containers), the server runs as the
// unprivileged user "nobody", since PostgreSQL refuses to run as root.
//
// Tests that use it are skipped under -short, and skipped with a message
// naming what to install when no PostgreSQL server binaries are found (in
// $PATH, or /usr/lib/postgresql/<version>/bin as Debian installs them).
// In CI they must not skip silently: with PGTEST_REQUIRED=1 (which
// .ci/run sets) or CI set (as CI services do), a PostgreSQL that cannot
// be started fails the test with the reason.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DefaultUser is the superuser of a new cluster when Options.User is empty.
const DefaultUser = "postgres"

// startTimeout bounds how long Start and Restart wait for the server to
// accept connections.
const startTimeout = 60 * time.Second

// Options shape the cluster.
type Options struct {
	// User is the superuser's name (default DefaultUser). Authentication
	// is "trust": any password is accepted.
	User string
}

// Server is a running PostgreSQL cluster. Its methods are not safe for
// concurrent use.
type Server struct {
	// Dir holds the cluster: data/, the socket directory run/ and the
	// server log postgres.log.
	Dir  string
	Port int
	User string

	bin  string
	cred *credential

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// BinDir returns the directory holding initdb and postgres, or "" if
// there is none.
func BinDir() string {
	if p, err := exec.LookPath("initdb"); err == nil {
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir
		}
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dir := strings.TrimSpace(string(out))
		if ok(dir) {
			return dir
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	// Newest major version first ("15" > "9.6" numerically).
	sort.Slice(dirs, func(i, j int) bool { return major(dirs[i]) > major(dirs[j]) })
	for _, dir := range append(dirs, "/usr/local/pgsql/bin") {
		if ok(dir) {
			return dir
		}
	}
	return ""
}

func ok(dir string) bool {
	for _, name := range []string{"initdb", "postgres"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}

func major(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

// EnvRequired names the variable that turns "cannot start PostgreSQL"
// from a skip into a test failure (see required).
const EnvRequired = "PGTEST_REQUIRED"

// required reports whether PostgreSQL tests must run: PGTEST_REQUIRED is
// set to a true value, or CI is set (GitHub Actions, GitLab CI and most
// others set CI=true) and PGTEST_REQUIRED is not false.
func required() bool {
	for _, name := range []string{EnvRequired, "CI"} {
		if v := os.Getenv(name); v != "" {
			on, err := strconv.ParseBool(v)
			return err != nil || on // an unreadable value errs on the side of running
		}
	}
	return false
}

// unavailable skips t for a missing PostgreSQL, or fails it when
// PostgreSQL tests are required.
func unavailable(t testing.TB, reason string) {
	t.Helper()
	if required() {
		t.Fatalf("pgtest: cannot start PostgreSQL, and PostgreSQL tests are required here (%s or CI is set): %s", EnvRequired, reason)
		return
	}
	t.Skip(reason)
}

// Start initialises and starts a cluster, and stops and removes it when
// the test ends. It skips the test under -short, and without PostgreSQL
// unless PostgreSQL tests are required (then it fails).
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a PostgreSQL server (skipped with -short)")
	}
	bin := BinDir()
	if bin == "" {
		unavailable(t, "no PostgreSQL server binaries (initdb, postgres) in $PATH or /usr/lib/postgresql/*/bin: "+
			"install PostgreSQL (Debian: apt-get install postgresql) to run this test")
	}
	cred, err := unprivileged()
	if err != nil {
		unavailable(t, fmt.Sprintf("cannot run PostgreSQL: %v", err))
	}
	s := &Server{User: opts.User, bin: bin, cred: cred}
	if s.User == "" {
		s.User = DefaultUser
	}
	// Not t.TempDir: as root its parents are private to root, and the
	// server runs as another user.
	s.Dir, err = os.MkdirTemp("", "pgtest-")
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
		_ = os.RemoveAll(s.Dir)
	})
	for _, d := range []string{s.Dir, filepath.Join(s.Dir, "run")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatalf("pgtest: %v", err)
		}
		if err := cred.chown(d); err != nil {
			t.Fatalf("pgtest: %v", err)
		}
	}
	if err := s.initdb(); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	if s.Port, err = freePort(); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	if err := s.Start(); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return s
}

func (s *Server) initdb() error {
	cmd := exec.Command(filepath.Join(s.bin, "initdb"),
		"-D", filepath.Join(s.Dir, "data"), "-U", s.User, "--auth=trust",
		"--encoding=UTF8", "--no-locale", "--no-sync")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	s.cred.apply(cmd)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("initdb in %s: %v: %s", s.Dir, err, lastLines(out.String(), 5))
	}
	return nil
}

// Addr is the server's host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

// URL is a connection URL for database db as the superuser.
func (s *Server) URL(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User(s.User), Host: s.Addr(), Path: "/" + db,
		RawQuery: "sslmode=disable"}
	return u.String()
}

// CreateDatabase creates database name and returns its URL.
func (s *Server) CreateDatabase(t testing.TB, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	return s.URL(name)
}

// Start starts the server again after Stop, on the same port and data.
// It returns once the server accepts connections.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("server already running")
	}
	args := []string{"-D", filepath.Join(s.Dir, "data"), "-p", strconv.Itoa(s.Port),
		"-k", filepath.Join(s.Dir, "run"), "-c", "listen_addresses=127.0.0.1",
		// A test cluster: speed over durability against power loss.
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		// The Temporal server alone opens a pool per service and store.
		"-c", "max_connections=400", "-c", "shared_buffers=32MB"}
	logf, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	s.cred.apply(cmd)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start postgres: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(done)
	}()
	s.cmd, s.done = cmd, done
	return s.waitReady(done)
}

func (s *Server) waitReady(done <-chan struct{}) error {
	deadline := time.Now().Add(startTimeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-done:
			return fmt.Errorf("postgres exited at start: %s", lastLines(s.Log(), 5))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := pgx.Connect(ctx, s.URL("postgres"))
		if err == nil {
			_ = c.Close(ctx)
			cancel()
			return nil
		}
		cancel()
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("postgres not ready on %s after %s: %v; log: %s", s.Addr(), startTimeout, last, lastLines(s.Log(), 5))
}

// Stop shuts the server down (fast shutdown: open sessions are ended, the
// data is kept) and waits for it. Stopping a stopped server is a no-op.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	cmd, done := s.cmd, s.done
	s.cmd, s.done = nil, nil
	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-done:
		return nil
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("postgres on %s did not stop within 30s; killed", s.Addr())
	}
}

func (s *Server) logPath() string { return filepath.Join(s.Dir, "postgres.log") }

// Log returns the server log so far.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.logPath())
	return string(b)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
