package rpcserver

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/durableagent/durableagent/agent"
)

// DefaultMaxLineBytes bounds one input line (1 MiB). A longer line is
// discarded up to its newline and answered with an error, so one huge
// command cannot exhaust memory.
const DefaultMaxLineBytes = 1 << 20

// inputLine is one line of input, without its newline (and "\r"). tooLong
// is its full length when it exceeded the maximum (data is then nil); err
// is why there is no line (io.EOF after the last one).
type inputLine struct {
	data    []byte
	tooLong int
	err     error
}

// readLine reads the next line of r, of at most limit bytes. A last line
// without a newline is still a line.
func readLine(r *bufio.Reader, limit int) inputLine {
	var buf []byte
	n := 0 // bytes of this line read so far, without its newline
	for {
		chunk, err := r.ReadSlice('\n')
		chunk = bytes.TrimSuffix(chunk, []byte("\n"))
		if n += len(chunk); n <= limit {
			buf = append(buf, chunk...)
		}
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err != nil && (!errors.Is(err, io.EOF) || n == 0):
			return inputLine{err: err}
		case n > limit:
			return inputLine{tooLong: n} // the rest read and dropped
		}
		return inputLine{data: bytes.TrimSuffix(buf, []byte("\r"))}
	}
}

// lineWriter writes one JSON value per line; writes are serialised and
// the first write error is kept (stdout gone: nothing more can be said).
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

// write marshals v (without escaping HTML) and writes it as one line.
func (lw *lineWriter) write(v any) error {
	b, err := agent.MarshalPlain(v)
	if err != nil {
		return err
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	if lw.err != nil {
		return lw.err
	}
	if _, err := lw.w.Write(append(b, '\n')); err != nil {
		lw.err = err
	}
	return lw.err
}

func (lw *lineWriter) failed() error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.err
}
