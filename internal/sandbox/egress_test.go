package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/durableagent/durableagent/internal/egress"
)

// TestMain lets the test binary play the worker binary, which the
// allowlist sandbox binds in as its egress bridge (os.Executable).
func TestMain(m *testing.M) {
	egress.MaybeRunBridge(os.Args[1:])
	os.Exit(m.Run())
}

// syncBuffer is a log sink safe for the proxy's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// egressConfig is a network allowlist Config whose proxy resolves the
// names of names and dials the addresses of dials (203.0.113.0/24, a
// documentation range, mapped to local servers), so no internet is
// needed; its log lines go to log.
func egressConfig(t *testing.T, allow []string, names map[string]string, dials map[string]string, log io.Writer) Config {
	t.Helper()
	al, err := egress.ParseAllowList(allow)
	if err != nil {
		t.Fatal(err)
	}
	return Config{Network: NetworkAllowlist, Egress: egress.Options{
		Allow:  al,
		Logger: slog.New(slog.NewTextHandler(log, nil)),
		Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			a, ok := names[host]
			if !ok {
				return nil, fmt.Errorf("no such host %s", host)
			}
			return []netip.Addr{netip.MustParseAddr(a)}, nil
		},
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			to, ok := dials[addr]
			if !ok {
				return nil, fmt.Errorf("unreachable %s", addr)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, to)
		},
	}}
}

// Issue 22: with network allowlist a sandboxed bash reaches an allowed
// host through the proxy (curl picks up HTTP(S)_PROXY), gets 403 for any
// other, and cannot reach the host's loopback directly; the proxy logs
// to the configured logger and is gone when the call ends.
func TestSandbox_NetworkAllowlistReachesOnlyAllowedHosts(t *testing.T) {
	for _, tool := range []string{"curl", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " not installed")
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from "+r.Host)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the proxies' socket directories go
	var log syncBuffer
	c := egressConfig(t, []string{"allowed.test", "sneaky.test"},
		map[string]string{"allowed.test": "203.0.113.7", "denied.test": "203.0.113.9", "sneaky.test": "127.0.0.1"},
		map[string]string{"203.0.113.7:80": srv.Listener.Addr().String(), "203.0.113.9:80": srv.Listener.Addr().String()},
		&log)
	r := runner(t, c)
	script := strings.Join([]string{
		`curl -sS --max-time 10 http://allowed.test/; echo`,
		`curl -sS --max-time 10 -o /dev/null -w 'denied: %{http_code}\n' http://denied.test/`,
		`curl -sS --max-time 10 http://sneaky.test:` + port + `/`,
		`(exec 3<>/dev/tcp/127.0.0.1/` + port + `) 2>/dev/null && echo host loopback: reached || echo host loopback: refused`,
	}, "\n")
	res := bash(t, r, t.TempDir(), script, 30)
	for _, want := range []string{
		"hello from allowed.test\n",
		"denied: 403\n",
		"host sneaky.test resolves only to internal addresses (127.0.0.1)",
		"host loopback: refused",
	} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("sandbox output lacks %q:\n%s", want, res.Content)
		}
	}
	for _, want := range []string{"host=allowed.test", "allowed=true", "host=denied.test", "allowed=false"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("proxy log lacks %q:\n%s", want, log.String())
		}
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the call's proxy directory outlived it: %v", left)
	}
}

// A command that ignores the proxy variables has no network at all, and
// the command's exit status comes through the bridge.
func TestSandbox_NetworkAllowlistWithoutTheProxyIsNoNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	var log syncBuffer
	r := runner(t, egressConfig(t, []string{"allowed.test"}, nil, nil, &log))
	res := bash(t, r, t.TempDir(), fmt.Sprintf("(exec 3<>/dev/tcp/127.0.0.1/%d) 2>/dev/null && echo CONNECTED; exit 7", port), 10)
	if strings.Contains(res.Content, "CONNECTED") {
		t.Fatalf("allowlist reached the host's loopback directly: %s", res.Content)
	}
	if !res.IsError || !strings.Contains(res.Content, "7") {
		t.Fatalf("exit status 7 did not come through the bridge: %+v", res)
	}
}

// A call killed on its timeout takes its proxy with it: no process of it
// is left (the bridge shares their PID namespace), and the proxy's
// directory is gone.
func TestSandbox_NetworkAllowlistKilledCallLeavesNothing(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var log syncBuffer
	r := runner(t, egressConfig(t, []string{"allowed.test"}, nil, nil, &log))
	marker := fmt.Sprintf("sleep %d", 810000+os.Getpid()%1000)
	res := bash(t, r, t.TempDir(), "setsid "+marker+" & "+marker, 1)
	if !res.IsError || !strings.Contains(res.Content, "timed out") {
		t.Fatalf("want a timeout: %+v", res)
	}
	if left := processesRunning(t, marker); left != "" {
		t.Fatalf("processes outlived the killed call:\n%s", left)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("the killed call's proxy directory outlived it: %v", left)
	}
}
