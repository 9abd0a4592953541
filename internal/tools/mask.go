package tools

import (
	"bytes"
	"io"
	"sort"
	"sync"
)

// Masked stands where a secret was.
const Masked = "[redacted]"

// maskWriter masks secrets in a stream before w sees it: each occurrence of
// a needle becomes Masked, also when the command wrote it in pieces. The
// end of what it was given that could be the start of a needle is held
// back until the next Write shows whether it is (or Flush, at the end), so
// no piece of a secret reaches w, however the output was split.
type maskWriter struct {
	mu      sync.Mutex
	w       io.Writer
	needles [][]byte
	pending []byte
}

// newMaskWriter returns w itself when there is nothing to mask.
func newMaskWriter(w io.Writer, needles []string) io.Writer {
	m := &maskWriter{w: w}
	for _, n := range needles {
		if n != "" {
			m.needles = append(m.needles, []byte(n))
		}
	}
	if len(m.needles) == 0 {
		return w
	}
	return m
}

// Write passes p on, masked, but for a held-back end; it does not fail
// when w does not.
func (m *maskWriter) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	data := append(m.pending, p...)
	spans := m.find(data)
	keep := len(data) - m.heldBack(data)
	// A needle across keep is held back whole, to be found again.
	for _, s := range spans {
		if s[0] < keep && keep < s[1] {
			keep = s[0]
		}
	}
	out := maskSpans(data[:keep], spans)
	m.pending = append([]byte(nil), data[keep:]...)
	if len(out) == 0 {
		return len(p), nil
	}
	_, err := m.w.Write(out)
	return len(p), err
}

// Flush passes on what is held back: the output has ended, so it is no
// secret's start.
func (m *maskWriter) Flush() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.pending) > 0 {
		_, _ = m.w.Write(maskSpans(m.pending, m.find(m.pending)))
		m.pending = nil
	}
}

// heldBack is the length of the longest end of data that is the start of
// a needle (and not a whole one).
func (m *maskWriter) heldBack(data []byte) int {
	longest := 0
	for _, n := range m.needles {
		for k := min(len(n)-1, len(data)); k > longest; k-- {
			if bytes.HasPrefix(n, data[len(data)-k:]) {
				longest = k
				break
			}
		}
	}
	return longest
}

// find returns the spans [start, end) of every needle in data, sorted by
// start and merged where they overlap.
func (m *maskWriter) find(data []byte) [][2]int {
	var spans [][2]int
	for _, n := range m.needles {
		for off := 0; ; {
			i := bytes.Index(data[off:], n)
			if i < 0 {
				break
			}
			spans = append(spans, [2]int{off + i, off + i + len(n)})
			off += i + len(n)
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	var merged [][2]int
	for _, s := range spans {
		if k := len(merged) - 1; k >= 0 && s[0] <= merged[k][1] {
			merged[k][1] = max(merged[k][1], s[1])
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// maskSpans returns data with the spans that lie in it replaced by Masked
// (spans beyond len(data) are held back).
func maskSpans(data []byte, spans [][2]int) []byte {
	var out []byte
	last := 0
	for _, s := range spans {
		if s[1] > len(data) {
			break
		}
		out = append(out, data[last:s[0]]...)
		out = append(out, Masked...)
		last = s[1]
	}
	if out == nil {
		return data
	}
	return append(out, data[last:]...)
}
