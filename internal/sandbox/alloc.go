package sandbox

import (
	"bytes"
	"io"
	"sync/atomic"
)

// allocFailures are what programs print when an allocation fails, as
// they do under RLIMIT_AS (bash's xmalloc, glibc's strerror(ENOMEM),
// Python, C++, Go, GNU sort and others), lower-case.
var allocFailures = [][]byte{
	[]byte("cannot allocate memory"), []byte("cannot allocate "), []byte("memoryerror"),
	[]byte("bad_alloc"), []byte("out of memory"), []byte("memory exhausted"),
	[]byte("failed to allocate"), []byte("allocation failed"),
}

// allocWatch passes a command's output on and notes whether it reported
// a failed allocation (also across two writes).
type allocWatch struct {
	w    io.Writer
	tail []byte
	hit  atomic.Bool
}

// tailKeep is how much of one write is kept to match across the next.
const tailKeep = 32

func (a *allocWatch) Write(p []byte) (int, error) {
	if !a.hit.Load() {
		buf := bytes.ToLower(append(a.tail, p...))
		for _, m := range allocFailures {
			if bytes.Contains(buf, m) {
				a.hit.Store(true)
				break
			}
		}
		a.tail = append(a.tail[:0], buf[max(0, len(buf)-tailKeep):]...)
	}
	return a.w.Write(p)
}

// seen reports whether the output reported a failed allocation.
func (a *allocWatch) seen() bool { return a.hit.Load() }
