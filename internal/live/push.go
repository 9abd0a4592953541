package live

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/converter"
)

// The push path (docs/live.md, "The push path"): a worker's Hub serves
// the snapshots of the calls it runs over one streaming HTTP GET per call
// and follower process, NDJSON, one PushLine per change; it carries
// nothing a follower could not read in the heartbeat details.

// Push is where a running call's snapshots are pushed.
type Push struct {
	// URL is the stream's address (the hub's URL and the token).
	URL string `json:"url"`
	// CertSHA256 is the hex SHA-256 of the hub's TLS certificate when
	// URL is https: the follower accepts that certificate only
	// (push_tls.go).
	CertSHA256 string `json:"certSha256,omitempty"`
	// Sealed says each line is sealed with the worker's payload codec:
	// the follower refuses lines in clear (push_codec.go).
	Sealed bool `json:"sealed,omitempty"`
}

// PushLine is one line of a push stream.
type PushLine struct {
	// AtNs is when the snapshot was taken (Unix nanoseconds, the
	// worker's clock).
	AtNs int64 `json:"at"`
	// Snap is the snapshot; after the first line of a stream, each of
	// its blocks holds only the bytes past the block's end sent before
	// (Offset at that end).
	Snap Snapshot `json:"snap"`
}

// Hub limits.
const (
	// PushWriteTimeout drops a client that cannot take one line in this
	// long.
	PushWriteTimeout = 10 * time.Second
	// pushGap is the least pause between two lines of a stream: a burst
	// of deltas costs one line.
	pushGap = 15 * time.Millisecond
	// maxPushStreams bounds the open streams of a hub, and
	// maxCallStreams those of one call.
	maxPushStreams = 4096
	maxCallStreams = 64
	// maxPushLine bounds one line a client reads (a snapshot's text is
	// MaxSnapshotBytes; JSON may escape each byte as six).
	maxPushLine = 1 << 20
	pushPath    = "/live/"
)

// Hub serves the snapshots of the calls a worker runs (Publish) to
// followers (Subscribe).
type Hub struct {
	ln   net.Listener
	srv  *http.Server
	base string
	pin  string                  // the TLS certificate's fingerprint ("": plain HTTP)
	dc   converter.DataConverter // seals the lines (nil: in clear)

	mu      sync.Mutex
	calls   map[string]*pushedCall // by token
	streams int
	closing chan struct{}
	closed  bool
}

type pushedCall struct {
	acc     *Accumulator
	done    chan struct{} // closed when the call ended
	streams int
}

// ListenHub starts a hub on addr (host:port; port 0 picks one). Its URL
// names the listener's address, or this host's name when addr's host is
// unspecified (":0", "0.0.0.0:7300"): what followers on other hosts dial.
// o says whether it serves HTTPS and seals its lines (push_tls.go,
// push_codec.go).
func ListenHub(addr string, o HubOptions) (*Hub, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("live push: listen on %s: %w", addr, err)
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if host, err = os.Hostname(); err != nil {
			ln.Close()
			return nil, fmt.Errorf("live push: host name to advertise for %s: %w", addr, err)
		}
	}
	sln, scheme, pin, err := o.secure(ln, host)
	if err != nil {
		ln.Close()
		return nil, err
	}
	h := &Hub{ln: sln, base: scheme + "://" + net.JoinHostPort(host, port) + pushPath, pin: pin, dc: o.Converter,
		calls: map[string]*pushedCall{}, closing: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc(pushPath, h.serve)
	h.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go h.srv.Serve(sln) //nolint:errcheck // ends with Close
	return h, nil
}

// URL is the hub's base URL (tokens follow it).
func (h *Hub) URL() string { return h.base }

// Publish serves acc's snapshots until the returned function is called
// (the call ended: each stream sends its last line and ends). The Push
// names a fresh token: only who reads this call's heartbeat details
// learns it.
func (h *Hub) Publish(acc *Accumulator) (Push, func()) {
	token := rand.Text()
	c := &pushedCall{acc: acc, done: make(chan struct{})}
	h.mu.Lock()
	h.calls[token] = c
	h.mu.Unlock()
	// The hub's URL, its certificate's fingerprint, whether it seals.
	return Push{URL: h.base + token, CertSHA256: h.pin, Sealed: h.dc != nil}, sync.OnceFunc(func() {
		h.mu.Lock()
		delete(h.calls, token)
		h.mu.Unlock()
		close(c.done)
	})
}

// Close stops the hub: its streams end, new ones are refused.
func (h *Hub) Close() error {
	h.mu.Lock()
	if !h.closed {
		h.closed = true
		close(h.closing)
	}
	h.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := h.srv.Shutdown(ctx); err != nil {
		return h.srv.Close()
	}
	return nil
}

// open registers a stream of token's call (nil and the HTTP status when
// refused).
func (h *Hub) open(token string) (*pushedCall, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.calls[token]
	switch {
	case h.closed:
		return nil, http.StatusServiceUnavailable
	case c == nil:
		return nil, http.StatusNotFound
	case h.streams >= maxPushStreams || c.streams >= maxCallStreams:
		return nil, http.StatusServiceUnavailable
	}
	h.streams++
	c.streams++
	return c, http.StatusOK
}

func (h *Hub) close(c *pushedCall) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.streams--
	c.streams--
}

func (h *Hub) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "live push: GET only", http.StatusMethodNotAllowed)
		return
	}
	c, code := h.open(strings.TrimPrefix(r.URL.Path, pushPath))
	if c == nil {
		msg := "live push: no running call has this token"
		if code != http.StatusNotFound {
			msg = "live push: too many streams or closing"
		}
		http.Error(w, msg, code)
		return
	}
	defer h.close(c)
	changed, stop := c.acc.Watch()
	defer stop()
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	enc := pushEncoder{}
	send := func() bool {
		line, err := encodeLine(h.dc, PushLine{AtNs: time.Now().UnixNano(), Snap: enc.next(c.acc.Snapshot())})
		if err != nil {
			return false
		}
		_ = rc.SetWriteDeadline(time.Now().Add(PushWriteTimeout))
		if _, err := w.Write(append(line, '\n')); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	gap := time.NewTimer(pushGap)
	defer gap.Stop()
	// over waits for a change or the gap's end (false), or the end of
	// the stream (true: the call's end sends its last bytes first).
	over := func(change <-chan struct{}, gapEnd <-chan time.Time) bool {
		select {
		case <-r.Context().Done():
		case <-h.closing:
		case <-c.done:
			send()
		case <-change:
			return false
		case <-gapEnd:
			return false
		}
		return true
	}
	if !send() {
		return
	}
	for !over(changed, nil) && send() {
		gap.Reset(pushGap)
		if over(nil, gap.C) {
			return
		}
	}
}

// pushEncoder makes a stream's lines: each block past what it sent (by
// block index, the end sent).
type pushEncoder map[int]int

func (sent pushEncoder) next(s Snapshot) Snapshot {
	blocks := make([]Block, len(s.Blocks))
	for i, b := range s.Blocks {
		end := b.End()
		if n, ok := sent[b.Index]; ok && n >= b.Offset && n <= end {
			b.Tail, b.Offset = b.Tail[n-b.Offset:], n
		}
		blocks[i] = b
		sent[b.Index] = end
	}
	s.Blocks = blocks
	s.Push = nil
	return s
}

// pushDecoder rebuilds whole snapshots from a stream's lines: it holds
// each block as rebuilt, by index.
type pushDecoder map[int]Block

func (have pushDecoder) next(s Snapshot) Snapshot {
	blocks := make([]Block, len(s.Blocks))
	for i, b := range s.Blocks {
		if old, ok := have[b.Index]; ok && b.Offset >= old.Offset && b.Offset <= old.End() {
			b.Tail, b.Offset = old.Tail[:b.Offset-old.Offset]+b.Tail, old.Offset
		}
		if len(b.Tail) > MaxSnapshotBytes {
			var t tailBuffer
			t.add(b.Tail)
			off, tail := t.tail(MaxSnapshotBytes)
			b.Offset, b.Tail = b.Offset+off, tail
		}
		blocks[i] = b
		have[b.Index] = b
	}
	s.Blocks = blocks
	return s
}

// pushTransport is the followers' HTTP transport for push streams: no
// proxy (the worker is dialled directly), short connect and header waits
// (the fallback is the heartbeats), as many connections per worker as
// calls it runs.
var pushTransport = &http.Transport{
	Proxy:                 nil,
	DialContext:           (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
	ResponseHeaderTimeout: 2 * time.Second,
	MaxIdleConnsPerHost:   64,
	IdleConnTimeout:       30 * time.Second,
}

// PushClient is the HTTP client Subscribe uses.
var PushClient = &http.Client{Transport: pushTransport}

// ErrPushRefused: the worker answered, but has no such call (it ended,
// or the token is not one) or takes no more streams.
var ErrPushRefused = errors.New("push stream refused")

// Subscribe reads the snapshots pushed at p, calling fn with each whole
// snapshot (bounded as a heartbeat's) and when the worker took it, until
// the call ends (nil), ctx ends or the stream fails. It opens sealed lines
// with dc: the client's data converter, with the worker's payload codec
// (nil: the SDK's default, which opens none). A sealed line it cannot open
// ends the stream with ErrPushSealed; a TLS certificate other than p's
// fingerprint, with ErrPushCertMismatch.
func Subscribe(ctx context.Context, p Push, dc converter.DataConverter, fn func(Snapshot, time.Time)) error {
	if !strings.HasPrefix(p.URL, "http://") && !strings.HasPrefix(p.URL, "https://") {
		return fmt.Errorf("push stream: address %q is not an http URL", p.URL)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.URL, nil)
	if err != nil {
		return fmt.Errorf("push stream: %w", err)
	}
	resp, err := clientFor(p).Do(req)
	if err != nil {
		return fmt.Errorf("push stream: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: %s", ErrPushRefused, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxPushLine)
	d := pushDecoder{}
	for sc.Scan() {
		l, err := decodeLine(sc.Bytes(), p, dc)
		if err != nil {
			return err
		}
		fn(d.next(l.Snap), time.Unix(0, l.AtNs))
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("push stream: %w", err)
	}
	return nil
}
