package egress

import (
	"context"
	"errors"
	"fmt"
	"github.com/durableagent/durableagent/internal/line"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"time"
)

// checkedKey carries a forwarded request's checked addresses to the
// transport's dial.
type checkedKey struct{}

// newForwarder makes the proxy's forwarding of absolute-URI http://
// requests (forward): a reverse proxy whose transport dials only the
// addresses the request's check returned.
func (p *Proxy) newForwarder() {
	p.transport = &http.Transport{
		Proxy:                  nil, // never the worker's own proxy settings
		DialContext:            p.dialChecked,
		ResponseHeaderTimeout:  responseTimeout,
		IdleConnTimeout:        30 * time.Second,
		MaxIdleConns:           16,
		MaxResponseHeaderBytes: 64 << 10,
	}
	p.rp = &httputil.ReverseProxy{
		// The client sent an absolute URI; it is the outgoing URL as is,
		// with no X-Forwarded headers naming the sandbox.
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.Out.Host = "" },
		Transport: p.transport,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			msg := fmt.Sprintf("egress proxy: forwarding to %s failed: %s", r.URL.Host, line.Fold(err.Error()))
			p.opts.Logger.Info("egress forward failed", "host", r.URL.Hostname(), "error", line.Fold(err.Error()))
			if errors.Is(err, context.Canceled) {
				// The client left or the proxy is closing: end the
				// connection with no response, never an empty 200.
				panic(http.ErrAbortHandler)
			}
			reply(w, http.StatusBadGateway, msg)
		},
	}
}

// forward checks the URL's host, then forwards the request.
func (p *Proxy) forward(w http.ResponseWriter, r *http.Request) {
	target := r.URL.Host
	if r.URL.Port() == "" {
		target = net.JoinHostPort(r.URL.Hostname(), "80")
	}
	addrs, host, port, ok := p.checkTarget(w, r, target, r.URL.Hostname())
	if !ok {
		return
	}
	p.logRequest(r.Method, host, port, true, "")
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), checkedKey{}, addrs)))
}

// dialChecked dials the addresses the request's check returned; a dial
// without them is a bug and refused.
func (p *Proxy) dialChecked(ctx context.Context, _, addr string) (net.Conn, error) {
	addrs, _ := ctx.Value(checkedKey{}).([]netip.Addr)
	_, portText, err := net.SplitHostPort(addr)
	port, perr := strconv.Atoi(portText)
	if len(addrs) == 0 || err != nil || perr != nil {
		return nil, fmt.Errorf("egress proxy: dial %s without a checked address", addr)
	}
	return p.dial(ctx, addrs, port)
}
