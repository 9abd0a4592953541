package egress

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a log sink the proxy's goroutines may share.
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

// lines returns the log lines that contain every one of want.
func (s *syncBuffer) lines(want ...string) []string {
	var out []string
	for _, l := range strings.Split(s.String(), "\n") {
		ok := l != ""
		for _, w := range want {
			ok = ok && strings.Contains(l, w)
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
}

// world is what the proxy under test sees of the network: names mapped
// to addresses (there is no DNS on the test machine), and addresses
// mapped to the local test servers that play them. A dial of an address
// not in dials goes to that address for real.
type world struct {
	names map[string][]string
	dials map[string]string // "ip:port" -> local "127.0.0.1:port"

	mu     sync.Mutex
	dialed []string
}

func (w *world) resolve(_ context.Context, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, a := range w.names[host] {
		out = append(out, netip.MustParseAddr(a))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("lookup %s: no such host", host)
	}
	return out, nil
}

func (w *world) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	w.mu.Lock()
	w.dialed = append(w.dialed, addr)
	w.mu.Unlock()
	if to, ok := w.dials[addr]; ok {
		addr = to
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func (w *world) dialedAddrs() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.dialed...)
}

// startProxy serves a proxy allowing allow in w on a socket in a fresh
// directory; its log is returned. It is closed when the test ends.
func startProxy(t *testing.T, allow []string, w *world, tune func(*Options)) (*Proxy, *syncBuffer) {
	t.Helper()
	list, err := ParseAllowList(allow)
	if err != nil {
		t.Fatal(err)
	}
	log := &syncBuffer{}
	opts := Options{Allow: list, Logger: slog.New(slog.NewTextHandler(log, nil)), Resolve: w.resolve, Dial: w.dial}
	if tune != nil {
		tune(&opts)
	}
	p, err := Listen(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, log
}

// dialProxy connects to the proxy's socket.
func dialProxy(t *testing.T, p *Proxy) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("unix", p.Path(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

// rawConnect sends CONNECT target (and extra bytes in the same write)
// and returns the proxy's response and the reader for the tunnel.
func rawConnect(t *testing.T, c net.Conn, target, extra string) (*http.Response, string, *bufio.Reader) {
	t.Helper()
	if _, err := fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n%s", target, target, extra); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	var body string
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
	}
	return resp, body, br
}

// viaProxy is an HTTP client whose proxy is p (reached on its socket).
func viaProxy(p *Proxy, tr *http.Transport) *http.Client {
	if tr == nil {
		tr = &http.Transport{}
	}
	tr.Proxy = http.ProxyURL(mustURL("http://egress.invalid"))
	tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", p.Path())
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// echoServer accepts TCP connections on loopback and writes back what it
// reads, prefixed by "echo:" once per connection.
func echoServer(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.WriteString(c, "echo:")
				io.Copy(c, c)
			}()
		}
	}()
	return ln
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}
