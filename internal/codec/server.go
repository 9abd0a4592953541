package codec

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/internal/egress"
)

// DefaultServerAddress is where `worker --dev` serves the codec when a key
// is configured: next to the Web UI's default port 8233.
const DefaultServerAddress = "127.0.0.1:8234"

// ErrNotLoopback: the codec server may only listen on a loopback address.
var ErrNotLoopback = errors.New("codec server must listen on a loopback address")

// allowedHeaders are those the Web UI sends with its codec requests.
const allowedHeaders = "Content-Type, X-Namespace, Authorization"

// Handler serves POST <any prefix>/encode and /decode as the Temporal Web
// UI and CLI expect (Payloads in protojson), with CORS headers for the
// browser origins in origins (e.g. "http://127.0.0.1:8233"). Requests from
// other origins get no CORS headers, so a browser will not hand them the
// answer.
func Handler(c *Codec, origins []string) http.Handler {
	allowed := map[string]bool{}
	for _, o := range origins {
		allowed[strings.TrimRight(o, "/")] = true
	}
	inner := converter.NewPayloadCodecHTTPHandler(c)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		w.Header().Add("Vary", "Origin")
		if origin != "" && allowed[origin] {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Credentials", "true")
			h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
			h.Set("Access-Control-Allow-Headers", allowedHeaders)
		}
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		inner.ServeHTTP(w, r)
	})
}

// UIOrigins are the browser origins of a Web UI at uiURL (e.g.
// "http://127.0.0.1:8233"): that URL, and the same port under
// "localhost" and "127.0.0.1", since people type either.
func UIOrigins(uiURL string) []string {
	uiURL = strings.TrimRight(uiURL, "/")
	scheme, hostPort, ok := strings.Cut(uiURL, "://")
	if !ok {
		return nil
	}
	out := []string{uiURL}
	if _, port, err := net.SplitHostPort(hostPort); err == nil {
		for _, h := range []string{"localhost", "127.0.0.1"} {
			if o := scheme + "://" + net.JoinHostPort(h, port); o != uiURL {
				out = append(out, o)
			}
		}
	}
	return out
}

// LoopbackAddress checks that addr ("host:port" or ":port") is on a
// loopback interface and returns it with the host filled in
// (":8234" becomes "127.0.0.1:8234").
func LoopbackAddress(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("codec server address %q: %w", addr, err)
	}
	if host == "" || host == "localhost" {
		host = "127.0.0.1"
	}
	if !egress.LoopbackHost(host) {
		return "", fmt.Errorf("codec server address %q: %w (it decrypts whatever it is sent)", addr, ErrNotLoopback)
	}
	return net.JoinHostPort(host, port), nil
}

// Server is a running codec server.
type Server struct {
	srv *http.Server
	url string
}

// Serve listens on addr (loopback only, see LoopbackAddress) and serves h
// in the background until Close.
func Serve(addr string, h http.Handler) (*Server, error) {
	addr, err := LoopbackAddress(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("codec server: listen on %s: %w", addr, err)
	}
	s := &Server{
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		url: "http://" + ln.Addr().String(),
	}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is the server's base URL, the codec endpoint to give the Web UI or
// `temporal --codec-endpoint`.
func (s *Server) URL() string { return s.url }

// Close stops the server, waiting briefly for requests in flight.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}
