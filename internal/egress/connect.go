package egress

import (
	"fmt"
	"github.com/durableagent/durableagent/internal/line"
	"io"
	"net"
	"net/http"
)

// connect serves CONNECT host:port: check, dial, answer 200 and splice
// the client's connection to the server's until either ends, the tunnel
// idles or the proxy closes.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	addrs, host, port, ok := p.checkTarget(w, r, r.Host, r.Host)
	if !ok {
		return
	}
	upstream, err := p.dial(r.Context(), addrs, port)
	if err != nil {
		msg := fmt.Sprintf("egress proxy: cannot reach %s: %s", net.JoinHostPort(host, fmt.Sprint(port)), line.Fold(err.Error()))
		p.logRequest(r.Method, host, port, true, msg)
		reply(w, http.StatusBadGateway, msg)
		return
	}
	p.logRequest(r.Method, host, port, true, "")
	if !p.startTunnel() {
		upstream.Close()
		reply(w, http.StatusServiceUnavailable, "egress proxy: closing")
		return
	}
	defer p.tunnels.Done()
	client, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		upstream.Close()
		reply(w, http.StatusInternalServerError, "egress proxy: cannot take over the connection")
		return
	}
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		client.Close()
		upstream.Close()
		return
	}
	// The server's reader may hold bytes the client sent right after its
	// request (a TLS ClientHello); they go first.
	if n := brw.Reader.Buffered(); n > 0 {
		client = &bufferedConn{Conn: client, r: io.MultiReader(io.LimitReader(brw.Reader, int64(n)), client)}
	}
	splice(p.ctx, client, upstream, p.opts.IdleTimeout)
}

// bufferedConn reads what a bufio.Reader still holds before the conn.
type bufferedConn struct {
	net.Conn
	r io.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// CloseWrite passes a half-close on to the connection beneath.
func (c *bufferedConn) CloseWrite() error { return closeWrite(c.Conn) }

// startTunnel counts a new tunnel unless the proxy is closing.
func (p *Proxy) startTunnel() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.tunnels.Add(1)
	return true
}
