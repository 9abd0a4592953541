package devserver

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	_ "modernc.org/sqlite" // database/sql driver "sqlite", to inspect the file after Stop
)

const (
	timerWorkflowName = "devserver-test-timer"
	testTaskQueue     = "devserver-test"
	// testTimeout bounds each wait on the server, generously for 2 cores.
	testTimeout = 90 * time.Second
)

// timerWorkflow sleeps on a durable server-side timer and reports it.
func timerWorkflow(ctx workflow.Context, d time.Duration) (string, error) {
	if err := workflow.NewTimer(ctx, d).Get(ctx, nil); err != nil {
		return "", err
	}
	return "woke after " + d.String(), nil
}

func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the embedded Temporal server")
	}
}

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

func startServer(t *testing.T, opts Options) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	s, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return s
}

// dial dials namespace on s ("default" when Options.Namespace was empty).
func dial(t *testing.T, s *Server, namespace string) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{
		HostPort:  s.FrontendAddress(),
		Namespace: namespace,
		Logger:    sdklog.NewStructuredLogger(quietLogger()),
	})
	if err != nil {
		t.Fatalf("dial %s: %v", s.FrontendAddress(), err)
	}
	t.Cleanup(c.Close)
	return c
}

func startWorker(t *testing.T, c client.Client) worker.Worker {
	t.Helper()
	w := worker.New(c, testTaskQueue, worker.Options{})
	w.RegisterWorkflowWithOptions(timerWorkflow, workflow.RegisterOptions{Name: timerWorkflowName})
	if err := w.Start(); err != nil {
		t.Fatalf("start worker: %v", err)
	}
	t.Cleanup(w.Stop)
	return w
}

// waitForEvent long-polls the run's history until an event of type want
// appears; it fails the test if the history ends or ctx does first.
func waitForEvent(ctx context.Context, t *testing.T, c client.Client, id, runID string, want enumspb.EventType) {
	t.Helper()
	iter := c.GetWorkflowHistory(ctx, id, runID, true, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatalf("read history of %s: %v", id, err)
		}
		if ev.GetEventType() == want {
			return
		}
	}
	t.Fatalf("history of %s ended without %s", id, want)
}

// Durable timers run on the embedded server: a workflow waiting on a 1s
// workflow.NewTimer completes through a real worker.
func TestDevServer_StartsAndRunsWorkflowWithDurableTimer(t *testing.T) {
	skipShort(t)
	s := startServer(t, Options{DataDir: t.TempDir(), UIPort: NoUI})
	if host, _, err := net.SplitHostPort(s.FrontendAddress()); err != nil || host != "127.0.0.1" {
		t.Errorf("FrontendAddress() = %q, want loopback host:port", s.FrontendAddress())
	}
	if got := s.UIAddress(); got != "" {
		t.Errorf("UIAddress() = %q with UI disabled, want empty", got)
	}

	c := dial(t, s, "default")
	startWorker(t, c)
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "timer-1s", TaskQueue: testTaskQueue},
		timerWorkflowName, time.Second)
	if err != nil {
		t.Fatalf("start workflow: %v", err)
	}
	var got string
	if err := run.Get(ctx, &got); err != nil {
		t.Fatalf("workflow result: %v", err)
	}
	if want := "woke after 1s"; got != want {
		t.Errorf("result = %q, want %q", got, want)
	}
	// The wait was a server timer, not something the worker did alone.
	waitForEvent(ctx, t, c, run.GetID(), run.GetRunID(), enumspb.EVENT_TYPE_TIMER_FIRED)
}

// State survives a restart: a workflow blocked on a pending 3s durable timer
// when the server stops completes after Start on the same data dir.
func TestDevServer_StateSurvivesRestart(t *testing.T) {
	skipShort(t)
	dataDir := t.TempDir()
	opts := Options{DataDir: dataDir, UIPort: NoUI, Namespace: "restart-test", Logger: quietLogger()}
	ctx, cancel := context.WithTimeout(t.Context(), 3*testTimeout)
	defer cancel()

	first, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("first Start: %v", err)
	}
	c1, err := client.Dial(client.Options{HostPort: first.FrontendAddress(), Namespace: opts.Namespace,
		Logger: sdklog.NewStructuredLogger(quietLogger())})
	if err != nil {
		t.Fatalf("dial first server: %v", err)
	}
	w1 := worker.New(c1, testTaskQueue, worker.Options{})
	w1.RegisterWorkflowWithOptions(timerWorkflow, workflow.RegisterOptions{Name: timerWorkflowName})
	if err := w1.Start(); err != nil {
		t.Fatalf("start first worker: %v", err)
	}
	run, err := c1.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "timer-3s", TaskQueue: testTaskQueue},
		timerWorkflowName, 3*time.Second)
	if err != nil {
		t.Fatalf("start workflow: %v", err)
	}
	// Stop only once the timer is recorded, so what must survive is a
	// pending durable timer.
	waitForEvent(ctx, t, c1, run.GetID(), run.GetRunID(), enumspb.EVENT_TYPE_TIMER_STARTED)
	w1.Stop()
	c1.Close()
	stopStart := time.Now()
	if err := first.Stop(); err != nil {
		t.Fatalf("first Stop: %v", err)
	}
	t.Logf("first Stop took %s", time.Since(stopStart).Round(time.Millisecond))
	if err := first.Stop(); err != nil {
		t.Errorf("second Stop = %v, want nil (idempotent)", err)
	}
	assertPortReleased(t, first.FrontendAddress())
	assertSQLiteIntact(t, filepath.Join(dataDir, dbFileName))

	second := startServer(t, opts)
	c2 := dial(t, second, opts.Namespace)
	startWorker(t, c2)
	var got string
	if err := c2.GetWorkflow(ctx, run.GetID(), run.GetRunID()).Get(ctx, &got); err != nil {
		t.Fatalf("workflow result after restart: %v", err)
	}
	if want := "woke after 3s"; got != want {
		t.Errorf("result = %q, want %q", got, want)
	}
}

// assertPortReleased proves a stopped server no longer holds addr.
func assertPortReleased(t *testing.T, addr string) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Errorf("%s still bound after Stop: %v", addr, err)
		return
	}
	_ = l.Close()
}

// assertSQLiteIntact proves the stopped server left a consistent database.
func assertSQLiteIntact(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer db.Close()
	var result string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&result); err != nil {
		t.Fatalf("integrity_check %s: %v", path, err)
	}
	if result != "ok" {
		t.Errorf("integrity_check %s = %q, want ok", path, result)
	}
}

// The Web UI is served on its own port and points at the frontend.
func TestDevServer_UIAnswers(t *testing.T) {
	skipShort(t)
	s := startServer(t, Options{DataDir: t.TempDir()})
	if !strings.HasPrefix(s.UIAddress(), "http://127.0.0.1:") {
		t.Fatalf("UIAddress() = %q, want http://127.0.0.1:<port>", s.UIAddress())
	}
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.UIAddress(), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", s.UIAddress(), err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s = %s, want 200 OK", s.UIAddress(), resp.Status)
	}

	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	assertPortReleased(t, strings.TrimPrefix(s.UIAddress(), "http://"))
	assertPortReleased(t, s.FrontendAddress())
}

// A taken port is a one-line error naming the port and the setting, and a
// failed Start leaves the data dir free for the next attempt.
func TestDevServer_PortInUseIsClearError(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := busy.Addr().(*net.TCPAddr).Port
	p := strconv.Itoa(port)

	tests := []struct {
		name     string
		opts     Options
		wantRole string
		wantMsg  string
	}{
		{
			name:     "frontend port",
			opts:     Options{Port: port, UIPort: NoUI},
			wantRole: roleFrontend,
			wantMsg:  "devserver: port " + p + " on 127.0.0.1 is in use (another Temporal server running? set dev.port)",
		},
		{
			name:     "UI port",
			opts:     Options{UIPort: port},
			wantRole: roleUI,
			wantMsg:  "devserver: UI port " + p + " on 127.0.0.1 is in use (another Temporal UI running? set dev.uiPort, or dev.ui to false)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.DataDir = t.TempDir()
			s, err := Start(t.Context(), tt.opts)
			if err == nil {
				_ = s.Stop()
				t.Fatal("Start succeeded on a taken port")
			}
			var inUse *ListenError
			if !errors.As(err, &inUse) || !errors.Is(err, syscall.EADDRINUSE) {
				t.Fatalf("Start error %v (%T), want a *ListenError wrapping EADDRINUSE", err, err)
			}
			if inUse.Port != port || inUse.Role != tt.wantRole {
				t.Errorf("ListenError{Port: %d, Role: %q}, want {%d, %q}", inUse.Port, inUse.Role, port, tt.wantRole)
			}
			if err.Error() != tt.wantMsg {
				t.Errorf("error = %q\nwant    %q", err, tt.wantMsg)
			}
			d, err := openDataDir(tt.opts.DataDir)
			if err != nil {
				t.Fatalf("data dir still locked after failed Start: %v", err)
			}
			_ = d.release()
		})
	}
}

// Bad options and unusable data dirs fail before anything starts, with a
// message naming the value.
func TestStart_RejectsUnusableOptions(t *testing.T) {
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	lockedDir := t.TempDir()
	held, err := openDataDir(lockedDir)
	if err != nil {
		t.Fatal(err)
	}
	defer held.release()

	tests := []struct {
		name    string
		opts    Options
		wantMsg string
	}{
		{"missing data dir", Options{}, "devserver: data dir is required"},
		{"data dir is a file", Options{DataDir: notADir}, "devserver: data dir " + notADir + " is not writable: "},
		{"data dir in use", Options{DataDir: lockedDir}, "devserver: data dir " + lockedDir + " is in use by another dev server"},
		{"IP not an address", Options{DataDir: t.TempDir(), IP: "example.com"}, `devserver: IP "example.com" is not an IP address`},
		{"port out of range", Options{DataDir: t.TempDir(), Port: 70000}, "devserver: port 70000 is out of range"},
		{"UI port below -1", Options{DataDir: t.TempDir(), UIPort: -2}, "devserver: UI port -2 is out of range"},
		{"system namespace", Options{DataDir: t.TempDir(), Namespace: "temporal-system"}, `devserver: namespace "temporal-system" is reserved`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Start(t.Context(), tt.opts)
			if err == nil {
				_ = s.Stop()
				t.Fatal("Start succeeded")
			}
			if !strings.HasPrefix(err.Error(), tt.wantMsg) {
				t.Errorf("error = %q, want prefix %q", err, tt.wantMsg)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}
