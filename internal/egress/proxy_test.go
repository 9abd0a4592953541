package egress

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// An allowed name reached through CONNECT: the proxy resolves it, dials
// the address it checked, and the client's TLS session runs end to end.
func TestProxy_ConnectReachesAllowedHost(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello from "+r.Host+r.URL.Path)
	}))
	defer srv.Close()
	w := &world{
		names: map[string][]string{"allowed.test": {"203.0.113.7"}},
		dials: map[string]string{"203.0.113.7:443": srv.Listener.Addr().String()},
	}
	p, log := startProxy(t, []string{"allowed.test"}, w, nil)

	tr := &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs:    srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs,
		ServerName: "example.com", // the test certificate's name
	}}
	resp, err := viaProxy(p, tr).Get("https://allowed.test/hello")
	if err != nil {
		t.Fatalf("GET through the proxy: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello from allowed.test/hello" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	if got := w.dialedAddrs(); len(got) != 1 || got[0] != "203.0.113.7:443" {
		t.Errorf("dialled %v, want the resolved address 203.0.113.7:443 only", got)
	}
	if lines := log.lines("method=CONNECT", "host=allowed.test", "port=443", "allowed=true"); len(lines) != 1 {
		t.Errorf("want one allowed log line, log:\n%s", log)
	}
}

// A host not in the list gets 403 with one line naming the host and the
// setting, over CONNECT and plain HTTP, and a log line; nothing is
// dialled.
func TestProxy_DeniedHostGets403AndLogLine(t *testing.T) {
	w := &world{names: map[string][]string{"evil.test": {"203.0.113.9"}, "example.test": {"203.0.113.9"}}}
	p, log := startProxy(t, []string{"*.example.test"}, w, nil)

	for _, target := range []string{"evil.test:443", "example.test:443", "203.0.113.9:443"} {
		resp, body, _ := rawConnect(t, dialProxy(t, p), target, "")
		if resp.StatusCode != http.StatusForbidden || strings.Count(body, "\n") != 1 ||
			!strings.Contains(body, "host "+target+" is not in tools.sandbox.allowHosts") {
			t.Errorf("CONNECT %s: %d %q, want 403 naming the host and the setting", target, resp.StatusCode, body)
		}
	}
	resp, err := viaProxy(p, nil).Get("http://evil.test/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "host evil.test:80 is not in tools.sandbox.allowHosts") {
		t.Errorf("GET http://evil.test/x: %d %q", resp.StatusCode, body)
	}
	if got := w.dialedAddrs(); len(got) != 0 {
		t.Errorf("denied requests dialled %v", got)
	}
	if n := len(log.lines("host=evil.test", "allowed=false", "tools.sandbox.allowHosts")); n != 2 {
		t.Errorf("want 2 denial lines for evil.test, log:\n%s", log)
	}
}

// A listed name that resolves to loopback (or another internal address)
// is refused, and so are internal IP literals; listing the address
// itself is what allows it.
func TestProxy_LoopbackRefusedUnlessListedByIP(t *testing.T) {
	// A real server on loopback: were the proxy to dial it, it would answer.
	target := echoServer(t)
	_, port, _ := net.SplitHostPort(target.Addr().String())
	w := &world{names: map[string][]string{
		"allowed.test":  {"127.0.0.1"},
		"private.test":  {"10.0.0.8", "169.254.169.254"},
		"mixed.test":    {"127.0.0.1", "203.0.113.7"},
		"localhost":     {"127.0.0.1", "::1"},
		"rebind.a.test": {"::ffff:127.0.0.1"},
	}}
	p, log := startProxy(t, []string{"allowed.test", "private.test", "mixed.test", "localhost", "*.a.test"}, w, nil)
	for _, tc := range []struct{ target, want string }{
		{"allowed.test:" + port, "host allowed.test resolves only to internal addresses (127.0.0.1)"},
		{"localhost:" + port, "resolves only to internal addresses"},
		{"private.test:443", "resolves only to internal addresses (10.0.0.8)"},
		{"rebind.a.test:" + port, "resolves only to internal addresses (127.0.0.1)"},
		{"127.0.0.1:" + port, "is not in tools.sandbox.allowHosts"},
		{"[::ffff:127.0.0.1]:" + port, "is not in tools.sandbox.allowHosts"},
		{"169.254.169.254:80", "is not in tools.sandbox.allowHosts"},
	} {
		resp, body, _ := rawConnect(t, dialProxy(t, p), tc.target, "")
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, tc.want) {
			t.Errorf("CONNECT %s: %d %q, want 403 with %q", tc.target, resp.StatusCode, body, tc.want)
		}
	}
	if got := w.dialedAddrs(); len(got) != 0 {
		t.Fatalf("refused requests dialled %v", got)
	}
	// A name with a public and a loopback address: only the public one is
	// dialled (it fails here: there is no network).
	rawConnect(t, dialProxy(t, p), "mixed.test:"+port, "")
	for _, a := range w.dialedAddrs() {
		if strings.HasPrefix(a, "127.") {
			t.Errorf("mixed.test: dialled the loopback address %s", a)
		}
	}
	if len(log.lines("allowed=false", "internal addresses")) < 4 {
		t.Errorf("refusals not logged:\n%s", log)
	}

	// Listed by IP, the same address is reached, by literal and by name.
	p2, _ := startProxy(t, []string{"allowed.test", "127.0.0.1"}, w, nil)
	for _, tgt := range []string{"127.0.0.1:" + port, "allowed.test:" + port} {
		c := dialProxy(t, p2)
		resp, body, br := rawConnect(t, c, tgt, "")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("CONNECT %s with 127.0.0.1 listed: %d %q", tgt, resp.StatusCode, body)
		}
		io.WriteString(c, "ping")
		got := make([]byte, len("echo:ping"))
		if _, err := io.ReadFull(br, got); err != nil || string(got) != "echo:ping" {
			t.Fatalf("tunnel to %s: %q, %v", tgt, got, err)
		}
	}
}

// Plain absolute-URI HTTP is forwarded to the checked address: method,
// path, query and body arrive; proxy headers do not.
func TestProxy_PlainHTTPForward(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Seen-Proxy-Headers", r.Header.Get("Proxy-Authorization")+r.Header.Get("Proxy-Connection"))
		io.WriteString(w, r.Method+" "+r.Host+" "+r.URL.RequestURI()+" "+string(b))
	}))
	defer srv.Close()
	w := &world{
		names: map[string][]string{"pkgs.test": {"203.0.113.8"}},
		dials: map[string]string{"203.0.113.8:8080": srv.Listener.Addr().String()},
	}
	p, log := startProxy(t, []string{"pkgs.test:8080"}, w, nil)

	req, _ := http.NewRequest(http.MethodPost, "http://pkgs.test:8080/simple/x?y=1", strings.NewReader("payload"))
	req.Header.Set("Proxy-Authorization", "Basic c2VjcmV0")
	resp, err := viaProxy(p, nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "POST pkgs.test:8080 /simple/x?y=1 payload" {
		t.Fatalf("got %d %q", resp.StatusCode, body)
	}
	if h := resp.Header.Get("X-Seen-Proxy-Headers"); h != "" {
		t.Errorf("the server saw proxy headers %q", h)
	}
	if len(log.lines("method=POST", "host=pkgs.test", "port=8080", "allowed=true")) != 1 {
		t.Errorf("log:\n%s", log)
	}
	// The port is part of the entry: port 80 of the same host is denied.
	resp, err = viaProxy(p, nil).Get("http://pkgs.test/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("pkgs.test:80 with pkgs.test:8080 listed: %d, want 403", resp.StatusCode)
	}
}

// Bytes a client sends right behind its CONNECT (before the 200) reach
// the server first, and a request that is no proxy request gets 400.
func TestProxy_TunnelKeepsEarlyBytesAndRefusesOriginRequests(t *testing.T) {
	echo := echoServer(t)
	w := &world{
		names: map[string][]string{"echo.test": {"203.0.113.5"}},
		dials: map[string]string{"203.0.113.5:7": echo.Addr().String()},
	}
	p, _ := startProxy(t, []string{"echo.test"}, w, nil)
	c := dialProxy(t, p)
	resp, _, br := rawConnect(t, c, "echo.test:7", "early")
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %d", resp.StatusCode)
	}
	got := make([]byte, len("echo:early"))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != "echo:early" {
		t.Fatalf("tunnel read %q, %v", got, err)
	}

	c2 := dialProxy(t, p)
	io.WriteString(c2, "GET /x HTTP/1.1\r\nHost: echo.test\r\n\r\n")
	b := make([]byte, 512)
	n, _ := c2.Read(b)
	if !strings.HasPrefix(string(b[:n]), "HTTP/1.1 400") || !strings.Contains(string(b[:n]), "only CONNECT host:port and absolute http://") {
		t.Errorf("origin-form request: %q", b[:n])
	}
}

// Close ends a tunnel in use, removes the socket, and later connections
// fail; an idle tunnel is closed after IdleTimeout.
func TestProxy_CloseEndsInflightConnections(t *testing.T) {
	echo := echoServer(t)
	w := &world{
		names: map[string][]string{"echo.test": {"203.0.113.5"}},
		dials: map[string]string{"203.0.113.5:7": echo.Addr().String()},
	}
	p, _ := startProxy(t, []string{"echo.test"}, w, nil)
	c := dialProxy(t, p)
	resp, _, br := rawConnect(t, c, "echo.test:7", "")
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %d", resp.StatusCode)
	}
	io.WriteString(c, "x")
	if _, err := io.ReadFull(br, make([]byte, len("echo:x"))); err != nil {
		t.Fatal(err)
	}

	closed := make(chan error, 1)
	go func() { closed <- p.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return with a tunnel open")
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) && !isReset(err) {
		t.Errorf("read on the tunnel after Close: %v, want the end of the connection", err)
	}
	if _, err := os.Stat(p.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket still there after Close: %v", err)
	}
	if _, err := net.Dial("unix", p.Path()); err == nil {
		t.Error("dial after Close succeeded")
	}

	// Idle: nothing moves for IdleTimeout, the tunnel ends.
	p2, _ := startProxy(t, []string{"echo.test"}, w, func(o *Options) { o.IdleTimeout = 200 * time.Millisecond })
	c2 := dialProxy(t, p2)
	_, _, br2 := rawConnect(t, c2, "echo.test:7", "")
	io.ReadFull(br2, make([]byte, len("echo:")))
	start := time.Now()
	if _, err := br2.ReadByte(); !errors.Is(err, io.EOF) && !isReset(err) {
		t.Errorf("idle tunnel: %v, want the end of the connection", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("idle tunnel ended after %v, want about 200ms", d)
	}
}

func isReset(err error) bool {
	var ne *net.OpError
	return errors.As(err, &ne) && !ne.Timeout()
}
