package egress

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// bufSize is the copy buffer of each direction of a spliced pair.
const bufSize = 32 << 10

// splice copies a to b and b to a until both directions have ended, ctx
// is done, or (idle > 0) no byte moved either way for idle; then it
// closes both. When one side stops sending, the other's write half is
// closed so a request/response protocol sees the end of the request.
func splice(ctx context.Context, a, b net.Conn, idle time.Duration) {
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go copyHalf(&wg, &last, b, a)
	go copyHalf(&wg, &last, a, b)
	go func() { wg.Wait(); close(done) }()

	var tick <-chan time.Time
	if idle > 0 {
		t := time.NewTicker(min(idle/4+time.Millisecond, time.Second))
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-done:
			a.Close()
			b.Close()
			return
		case <-ctx.Done():
		case <-tick:
			if time.Since(time.Unix(0, last.Load())) < idle {
				continue
			}
		}
		// Closing both ends the copies blocked in Read or Write.
		a.Close()
		b.Close()
		<-done
		return
	}
}

// copyHalf copies src to dst through one fixed buffer, noting each move
// in last, then closes dst's write half (or dst, when it has none).
func copyHalf(wg *sync.WaitGroup, last *atomic.Int64, dst, src net.Conn) {
	defer wg.Done()
	buf := make([]byte, bufSize)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			last.Store(time.Now().UnixNano())
			if _, werr := dst.Write(buf[:n]); werr != nil {
				src.Close()
				return
			}
			last.Store(time.Now().UnixNano())
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				// A reset or a closed connection: nothing more flows
				// either way.
				dst.Close()
				return
			}
			break
		}
	}
	closeWrite(dst)
}

// closeWrite half-closes c when it can (the other way may still carry
// data), else closes it.
func closeWrite(c net.Conn) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}
