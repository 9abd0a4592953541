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

// forwarder serves absolute-URI http:// requests: check the URL's host,
// then forward through a transport that dials only checked addresses.
type forwarder struct {
	p         *Proxy
	transport *http.Transport
	rp        *httputil.ReverseProxy
}

func newForwarder(p *Proxy) *forwarder {
	f := &forwarder{p: p}
	f.transport = &http.Transport{
		Proxy:                  nil, // never the worker's own proxy settings
		DialContext:            f.dialChecked,
		ResponseHeaderTimeout:  responseTimeout,
		IdleConnTimeout:        30 * time.Second,
		MaxIdleConns:           16,
		MaxResponseHeaderBytes: 64 << 10,
	}
	f.rp = &httputil.ReverseProxy{
		// The client sent an absolute URI; it is the outgoing URL as is,
		// with no X-Forwarded headers naming the sandbox.
		Rewrite:   func(pr *httputil.ProxyRequest) { pr.Out.Host = "" },
		Transport: f.transport,
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
	return f
}

func (f *forwarder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := r.URL.Host
	if r.URL.Port() == "" {
		target = net.JoinHostPort(r.URL.Hostname(), "80")
	}
	addrs, host, port, ok := f.p.checkTarget(w, r, target, r.URL.Hostname())
	if !ok {
		return
	}
	f.p.logRequest(r.Method, host, port, true, "")
	f.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), checkedKey{}, addrs)))
}

// dialChecked dials the addresses the request's check returned; a dial
// without them is a bug and refused.
func (f *forwarder) dialChecked(ctx context.Context, _, addr string) (net.Conn, error) {
	addrs, _ := ctx.Value(checkedKey{}).([]netip.Addr)
	_, portText, err := net.SplitHostPort(addr)
	port, perr := strconv.Atoi(portText)
	if len(addrs) == 0 || err != nil || perr != nil {
		return nil, fmt.Errorf("egress proxy: dial %s without a checked address", addr)
	}
	return f.p.dial(ctx, addrs, port)
}
