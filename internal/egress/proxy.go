package egress

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// dialTimeout bounds a name lookup plus the dials; responseTimeout the
// wait for a forwarded HTTP request's response header.
const (
	dialTimeout     = 15 * time.Second
	responseTimeout = 2 * time.Minute
)

// Options configure a Proxy; every zero value has a documented default.
type Options struct {
	// Allow is the allow-list (zero: every request is denied).
	Allow AllowList
	// Logger gets one line per request (nil: slog.Default()); give it the
	// session's attributes (Logger.With) to tell sandboxes apart.
	Logger *slog.Logger
	// Resolve looks a host name up (nil: the system resolver). Tests map
	// names to addresses with it; the proxy checks whatever it returns.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to a checked address "ip:port" (nil: a net.Dialer).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// HeaderTimeout bounds reading a request's header (0: 15s).
	HeaderTimeout time.Duration
	// IdleTimeout closes a tunnel or a kept-alive client connection on
	// which nothing moved for this long (0: 5 minutes).
	IdleTimeout time.Duration
	// MaxConns is how many client connections are served at once; more
	// wait to be accepted (0: 256).
	MaxConns int
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Resolve == nil {
		o.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if o.Dial == nil {
		var d net.Dialer
		o.Dial = d.DialContext
	}
	o.HeaderTimeout = cmp.Or(max(o.HeaderTimeout, 0), 15*time.Second)
	o.IdleTimeout = cmp.Or(max(o.IdleTimeout, 0), 5*time.Minute)
	o.MaxConns = cmp.Or(max(o.MaxConns, 0), 256)
}

// Proxy is an HTTP proxy serving a sandbox on a unix socket (see the
// package comment for its contract). Run one per sandbox: its socket is
// that sandbox's only way out, and its limits (MaxConns) and log lines
// are that sandbox's alone.
type Proxy struct {
	opts Options
	path string
	srv  *http.Server
	// transport and rp forward absolute-URI http:// requests (forward).
	transport *http.Transport
	rp        *httputil.ReverseProxy
	ctx       context.Context
	cancel    context.CancelFunc
	served    chan struct{}
	// tunnels counts CONNECT tunnels, which outlive the server's own
	// tracking once they hijack their connection; closed (under mu)
	// stops new ones, so Close's Wait never races an Add.
	mu        sync.Mutex
	closed    bool
	tunnels   sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
}

// Listen serves the proxy until Close on a unix socket (mode 0600) in a
// new directory of its own that only the worker's user can enter.
func Listen(opts Options) (*Proxy, error) {
	opts.defaults()
	dir, err := os.MkdirTemp("", "egress-") // mode 0700
	if err != nil {
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	path := filepath.Join(dir, "proxy.sock")
	ln, err := net.Listen("unix", path)
	if err == nil {
		if err = os.Chmod(path, 0o600); err != nil {
			ln.Close()
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("egress proxy: listen on %s: %w", path, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Proxy{opts: opts, path: path, ctx: ctx, cancel: cancel, served: make(chan struct{})}
	p.newForwarder()
	p.srv = &http.Server{
		Handler:           http.HandlerFunc(p.serveHTTP),
		ReadHeaderTimeout: opts.HeaderTimeout,
		IdleTimeout:       opts.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelDebug),
	}
	go func() {
		defer close(p.served)
		err := p.srv.Serve(&limitListener{Listener: ln, slots: make(chan struct{}, opts.MaxConns), done: make(chan struct{})})
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			opts.Logger.Error("egress proxy stopped", "socket", path, "error", err)
		}
	}()
	return p, nil
}

// Path is the proxy's socket.
func (p *Proxy) Path() string { return p.path }

// Close stops the proxy: no new connections, every in-flight request and
// tunnel ended, the socket's directory removed. It waits for the tunnels
// to end; a failure is also logged.
func (p *Proxy) Close() error {
	p.closeOnce.Do(func() {
		p.mu.Lock()
		p.closed = true
		p.mu.Unlock()
		// Client connections close before requests are cancelled, so no
		// cancelled request can still answer on one.
		p.closeErr = p.srv.Close()
		p.cancel()
		p.transport.CloseIdleConnections()
		<-p.served
		p.tunnels.Wait()
		if err := os.RemoveAll(filepath.Dir(p.path)); err != nil && p.closeErr == nil {
			p.closeErr = fmt.Errorf("egress proxy: remove %s: %w", filepath.Dir(p.path), err)
		}
		if p.closeErr != nil {
			p.opts.Logger.Warn("egress proxy close", "error", p.closeErr)
		}
	})
	return p.closeErr
}

func (p *Proxy) serveHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		p.connect(w, r)
	case r.URL.IsAbs() && r.URL.Scheme == "http":
		p.forward(w, r)
	default:
		p.logRequest(r.Method, r.Host, 0, false, "not a proxy request")
		reply(w, http.StatusBadRequest, "egress proxy: only CONNECT host:port and absolute http:// requests are served")
	}
}

// reply writes a one-line plain text body.
func reply(w http.ResponseWriter, status int, line string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Connection", "close")
	w.WriteHeader(status)
	fmt.Fprintln(w, line)
}
