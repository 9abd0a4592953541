package egress

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A client that sends no request within HeaderTimeout is dropped, and no
// more than MaxConns clients are served at once: the next waits for a
// slot instead of being served or buffered.
func TestProxy_BoundsSlowAndExcessClients(t *testing.T) {
	echo := echoServer(t)
	w := &world{
		names: map[string][]string{"echo.test": {"203.0.113.5"}},
		dials: map[string]string{"203.0.113.5:7": echo.Addr().String()},
	}
	p, _ := startProxy(t, []string{"echo.test"}, w, func(o *Options) {
		o.HeaderTimeout = 200 * time.Millisecond
		o.MaxConns = 1
	})

	silent := dialProxy(t, p)
	start := time.Now()
	if _, err := silent.Read(make([]byte, 1)); err == nil {
		t.Fatal("a silent client got bytes")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("a silent client was dropped after %v, want about 200ms", d)
	}

	first := dialProxy(t, p)
	if resp, _, _ := rawConnect(t, first, "echo.test:7", ""); resp.StatusCode != 200 {
		t.Fatalf("first tunnel: %d", resp.StatusCode)
	}
	second := dialProxy(t, p) // the kernel queues it; the proxy does not accept it yet
	io.WriteString(second, "CONNECT echo.test:7 HTTP/1.1\r\nHost: echo.test:7\r\n\r\n")
	second.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := second.Read(make([]byte, 64)); err == nil || n > 0 {
		t.Fatalf("a client past MaxConns was served (%d bytes, %v)", n, err)
	}
	first.Close()
	second.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, 64)
	n, err := second.Read(b)
	if err != nil || !strings.HasPrefix(string(b[:n]), "HTTP/1.1 200") {
		t.Fatalf("after the first client left, the second got %q, %v", b[:n], err)
	}
}

// An allowed host that does not answer gets 502 with one line naming it,
// over CONNECT and plain HTTP, and the attempt is logged.
func TestProxy_UnreachableAllowedHostGets502(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := ln.Addr().String()
	ln.Close() // nothing listens there now
	w := &world{
		names: map[string][]string{"down.test": {"203.0.113.6"}},
		dials: map[string]string{"203.0.113.6:443": closedPort, "203.0.113.6:80": closedPort},
	}
	p, log := startProxy(t, []string{"down.test", "nowhere.test"}, w, nil)
	resp, body, _ := rawConnect(t, dialProxy(t, p), "down.test:443", "")
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "egress proxy: cannot reach down.test:443") || strings.Count(body, "\n") != 1 {
		t.Errorf("CONNECT to a host that is down: %d %q", resp.StatusCode, body)
	}
	resp, body, _ = rawConnect(t, dialProxy(t, p), "nowhere.test:443", "")
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "egress proxy: cannot resolve nowhere.test") {
		t.Errorf("CONNECT to a name without addresses: %d %q", resp.StatusCode, body)
	}
	r, err := viaProxy(p, nil).Get("http://down.test/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != http.StatusBadGateway || !strings.Contains(string(b), "egress proxy: forwarding to down.test failed") {
		t.Errorf("GET from a host that is down: %d %q", r.StatusCode, b)
	}
	if len(log.lines("host=down.test", "port=443", "allowed=true", "cannot reach")) != 1 {
		t.Errorf("log:\n%s", log)
	}
}

// Close also ends a forwarded HTTP request waiting on a slow server, and
// a second Listen on a socket in use fails naming the path.
func TestProxy_CloseEndsForwardedRequest(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // answers only when the test ends
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	w := &world{
		names: map[string][]string{"slow.test": {"203.0.113.4"}},
		dials: map[string]string{"203.0.113.4:80": srv.Listener.Addr().String()},
	}
	p, _ := startProxy(t, []string{"slow.test"}, w, nil)
	got := make(chan error, 1)
	go func() {
		resp, err := viaProxy(p, nil).Get("http://slow.test/")
		if err == nil {
			resp.Body.Close()
			err = errors.New(resp.Status)
		}
		got <- err
	}()
	time.Sleep(100 * time.Millisecond) // the request is waiting on the server
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if strings.HasPrefix(err.Error(), "200") {
			t.Errorf("the request got %v after Close", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a forwarded request outlived Close")
	}
}
