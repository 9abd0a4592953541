package egress

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary play the worker binary: run with
// BridgeCommand first, it is the bridge.
func TestMain(m *testing.M) {
	MaybeRunBridge(os.Args[1:])
	os.Exit(m.Run())
}

// The bridge carries bytes both ways between a loopback TCP client and
// the unix socket, half-closes included, and ends its connections when
// its context ends.
func TestBridge_ForwardsBytesBothWays(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "up.sock")
	up, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	// The socket's side reads the whole request, then answers and closes.
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b, _ := io.ReadAll(c)
				io.WriteString(c, "got "+strings.ToUpper(string(b)))
			}()
		}
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Bridge(ctx, ln, sock) }()

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	big := bytes.Repeat([]byte("abc"), 100_000) // more than one copy buffer
	go func() {
		c.Write(big)
		c.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "got "+strings.ToUpper(string(big)) {
		t.Fatalf("read %d bytes (%.20q...), %v", len(got), got, err)
	}
	c.Close()

	// A connection open when the context ends is closed, and Bridge returns.
	held, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	held.Write([]byte("x")) // the socket side waits for more
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Bridge: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Bridge did not return after its context ended")
	}
	held.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := held.Read(make([]byte, 1)); err == nil {
		t.Error("a connection outlived the bridge")
	}
}

// The bridge command, as the runner starts it: listen, run the command
// with the proxy environment, pass its status on; curl in the command
// reaches an allowed host through bridge and proxy and is refused a
// denied one. Bad arguments are one-line errors.
func TestRunBridge_CommandReachesProxy(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl not installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "served "+r.Host)
	}))
	defer srv.Close()
	w := &world{
		names: map[string][]string{"allowed.test": {"203.0.113.7"}},
		dials: map[string]string{"203.0.113.7:80": srv.Listener.Addr().String()},
	}
	p, log := startProxy(t, []string{"allowed.test"}, w, nil)
	dir := t.TempDir()
	script := `printf '%s\n' "$HTTPS_PROXY" > env.txt
` + curl + ` -sS --max-time 10 http://allowed.test/ > allowed.txt
` + curl + ` -sS --max-time 10 http://denied.test/ > denied.txt
exit 3`
	cmd := exec.Command(os.Args[0], BridgeCommand, "--socket", p.Path(), "--listen", "127.0.0.1:0", "--", "sh", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NO_PROXY=", "no_proxy=")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 3 {
		t.Fatalf("bridge with command: %v, want exit status 3; output %s", err, out)
	}
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return string(b)
	}
	if env := read("env.txt"); !strings.HasPrefix(env, "http://127.0.0.1:") {
		t.Errorf("HTTPS_PROXY in the command = %q", env)
	}
	if got := read("allowed.txt"); got != "served allowed.test" {
		t.Errorf("allowed host through the bridge: %q (output %s)", got, out)
	}
	if got := read("denied.txt"); !strings.Contains(got, "host denied.test:80 is not in tools.sandbox.allowHosts") {
		t.Errorf("denied host through the bridge: %q", got)
	}
	if len(log.lines("host=denied.test", "allowed=false")) != 1 {
		t.Errorf("log:\n%s", log)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "egress bridge: --socket is required"},
		{[]string{"--socket", "s", "--listen", "0.0.0.0:3128"}, "must be a loopback host:port"},
		{[]string{"--socket", "s", "--listen", "127.0.0.1:0", "--", "/nonexistent/cmd"}, "egress bridge: start /nonexistent/cmd"},
	} {
		var stderr bytes.Buffer
		code := RunBridge(tc.args, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 {
			t.Errorf("RunBridge(%q) = %d, %q; want one line with %q", tc.args, code, stderr.String(), tc.want)
		}
	}
}
