package egress

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/durableagent/durableagent/internal/line"
	"net"
	"net/http"
	"net/netip"
	"strconv"
)

// refusal is why a request is not served: its status and one line for
// the client (and the log).
type refusal struct {
	status int
	line   string
}

// checkTarget checks the target host:port of r (check): the addresses
// that may be dialled, or ok false once the refusal is logged (naming
// shown when target is not host:port) and answered.
func (p *Proxy) checkTarget(w http.ResponseWriter, r *http.Request, target, shown string) (addrs []netip.Addr, host string, port int, ok bool) {
	addrs, host, port, ref := p.check(r.Context(), target)
	if ref != nil {
		p.logRequest(r.Method, cmp.Or(host, shown), port, false, ref.line)
		reply(w, ref.status, ref.line)
	}
	return addrs, host, port, ref == nil
}

// check decides whether hostport ("host:port", "[v6]:port") may be
// reached and returns the addresses that may be dialled: an IP literal
// only when listed; a name only when listed, and then only those of its
// addresses that are not internal or are themselves listed.
func (p *Proxy) check(ctx context.Context, hostport string) (_ []netip.Addr, host string, port int, _ *refusal) {
	host, portText, err := net.SplitHostPort(hostport)
	if err != nil || host == "" {
		return nil, "", 0, &refusal{http.StatusBadRequest, fmt.Sprintf("egress proxy: %q is not host:port", hostport)}
	}
	port, err = strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return nil, "", 0, &refusal{http.StatusBadRequest, fmt.Sprintf("egress proxy: %q has no port from 1 to 65535", hostport)}
	}
	notListed := &refusal{http.StatusForbidden,
		fmt.Sprintf("egress proxy: host %s is not in %s", net.JoinHostPort(host, strconv.Itoa(port)), SettingKey)}
	allow := p.opts.Allow
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() == "" && allow.ListsAddr(ip, port) {
			return []netip.Addr{ip.Unmap()}, host, port, nil
		}
		return nil, host, port, notListed
	}
	name, err := normalName(host)
	if err != nil {
		return nil, host, port, &refusal{http.StatusBadRequest, fmt.Sprintf("egress proxy: bad host %q: %v", host, err)}
	}
	if !allow.AllowsName(name, port) {
		return nil, host, port, notListed
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	addrs, err := p.opts.Resolve(ctx, name)
	if err != nil {
		return nil, host, port, &refusal{http.StatusBadGateway, fmt.Sprintf("egress proxy: cannot resolve %s: %v", name, line.Fold(err.Error()))}
	}
	var ok, internal []netip.Addr
	for _, a := range addrs {
		if a = a.Unmap(); Internal(a) && !allow.ListsAddr(a, port) {
			internal = append(internal, a)
		} else {
			ok = append(ok, a)
		}
	}
	if len(ok) == 0 {
		if len(internal) == 0 {
			return nil, host, port, &refusal{http.StatusBadGateway, fmt.Sprintf("egress proxy: %s has no address", name)}
		}
		return nil, host, port, &refusal{http.StatusForbidden, fmt.Sprintf(
			"egress proxy: host %s resolves only to internal addresses (%s); list such an address in %s to allow it",
			name, internal[0], SettingKey)}
	}
	return ok, host, port, nil
}

// DialContext returns a dial of the worker's own connections that the
// allow-list governs (an HTTP MCP server's): addr ("host:port") is
// checked as the proxy checks a sandbox's request, and only the checked
// addresses are dialled; a refusal is an error of one line naming the
// host and SettingKey.
func DialContext(allow AllowList) func(ctx context.Context, network, addr string) (net.Conn, error) {
	p := &Proxy{opts: Options{Allow: allow}}
	p.opts.defaults()
	return func(ctx context.Context, _, addr string) (net.Conn, error) {
		addrs, _, port, ref := p.check(ctx, addr)
		if ref != nil {
			return nil, errors.New(ref.line)
		}
		return p.dial(ctx, addrs, port)
	}
}

// dial connects to the first of addrs that answers, within dialTimeout.
func (p *Proxy) dial(ctx context.Context, addrs []netip.Addr, port int) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	var first error
	for _, a := range addrs {
		c, err := p.opts.Dial(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, first
}

// logRequest writes the request's one log line; reason is why it was
// refused or failed ("" when it was served).
func (p *Proxy) logRequest(method, host string, port int, allowed bool, reason string) {
	args := []any{"method", method, "host", host, "port", port, "allowed", allowed}
	if reason != "" {
		args = append(args, "reason", reason)
	}
	p.opts.Logger.Info("egress", args...)
}
