package sandbox

import (
	"bytes"
	"io"
	"slices"
	"sync/atomic"
)

// A sign is a kind of message by which a command's output tells that a
// limit of the sandbox stopped one of its processes.
type sign int

const (
	// signAlloc: an allocation failed, as under RLIMIT_AS.
	signAlloc sign = iota
	// signCPU: the shell reports a process that SIGXCPU (RLIMIT_CPU's
	// soft limit) ended.
	signCPU
	// signFork: a fork failed with EAGAIN, as under RLIMIT_NPROC.
	signFork
	// signCrash: the shell reports a job that SIGSEGV, SIGBUS or a
	// core dump ended (evidence of the memory limit, not proof).
	signCrash
	nSigns
)

// signTexts are, per sign, what programs print, lower-case:
//   - signAlloc: bash's xmalloc, glibc's strerror(ENOMEM), Python, C++,
//     Go, GNU sort, Rust ("memory allocation of N bytes failed"), the
//     JVM ("Could not reserve enough space", "insufficient memory") and
//     others;
//   - signCPU: bash's, dash's and busybox's name of SIGXCPU
//     (strsignal), printed for a job the signal ended;
//   - signFork: bash ("fork: retry: Resource temporarily unavailable"),
//     dash ("Cannot fork"), Python's os.fork and subprocess (EAGAIN,
//     errno 11);
//   - signCrash: the shells' names of SIGSEGV and SIGBUS, and the
//     "(core dumped)" of a job report (SIGABRT's name, "Aborted", is
//     too common a word).
var signTexts = [nSigns][][]byte{
	signAlloc: {
		[]byte("cannot allocate memory"), []byte("cannot allocate "), []byte("memoryerror"),
		[]byte("bad_alloc"), []byte("out of memory"), []byte("memory exhausted"),
		[]byte("failed to allocate"), []byte("allocation failed"),
		[]byte("memory allocation of "), []byte("could not reserve enough space"),
		[]byte("insufficient memory"),
	},
	signCPU: {[]byte("cpu time limit exceeded")},
	signFork: {
		[]byte("fork: retry: resource temporarily unavailable"), []byte("fork: resource temporarily unavailable"),
		[]byte("cannot fork"), []byte("can't fork"), []byte("blockingioerror: [errno 11]"),
	},
	signCrash: {[]byte("segmentation fault"), []byte("bus error"), []byte("(core dumped)")},
}

// outputWatch passes a command's output on and notes which of the signs
// it watches for the output showed (also across two writes).
type outputWatch struct {
	w     io.Writer
	watch [nSigns]bool
	tail  []byte
	hit   [nSigns]atomic.Bool
}

// tailKeep is how much of one write is kept to match across the next
// (longer than the longest sign text).
const tailKeep = 64

// newOutputWatch is an outputWatch of w for the signs the limits of c
// can cause, or nil when c sets none of them.
func newOutputWatch(w io.Writer, c Config) *outputWatch {
	o := &outputWatch{w: w}
	o.watch[signAlloc] = c.MemoryMB > 0 && !c.memCgroup
	o.watch[signCPU] = c.CPUSeconds > 0
	// With a pids cgroup the cgroup counts the refused forks itself.
	o.watch[signFork] = c.MaxProcesses > 0 && !c.pidsCgroup
	o.watch[signCrash] = c.MemoryMB > 0 && !c.memCgroup
	if slices.Contains(o.watch[:], true) {
		return o
	}
	return nil
}

func (o *outputWatch) Write(p []byte) (int, error) {
	var buf []byte
	for s := sign(0); s < nSigns; s++ {
		if !o.watch[s] || o.hit[s].Load() {
			continue
		}
		if buf == nil {
			buf = bytes.ToLower(append(o.tail, p...))
		}
		for _, m := range signTexts[s] {
			if bytes.Contains(buf, m) {
				o.hit[s].Store(true)
				break
			}
		}
	}
	if buf != nil {
		o.tail = append(o.tail[:0], buf[max(0, len(buf)-tailKeep):]...)
	}
	return o.w.Write(p)
}

// seen reports whether the output showed sign s (false for a nil watch).
func (o *outputWatch) seen(s sign) bool { return o != nil && o.hit[s].Load() }
