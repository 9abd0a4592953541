package tools

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// truncation describes how a text was cut to the limits.
type truncation struct {
	content   string
	truncated bool
	byBytes   bool // the byte limit (not the line limit) was hit
	outLines  int
	outBytes  int
	// lastLinePartial (tail): the only line kept is the end of a line longer
	// than the byte limit.
	lastLinePartial bool
	// firstLineTooLong (head): the first line alone exceeds the byte limit,
	// nothing is kept.
	firstLineTooLong bool
}

// untruncated returns s whole when its lines fit the limits; otherwise
// fits is false and t is only marked truncated.
func untruncated(s string, lines []string, maxLines, maxBytes int) (t truncation, fits bool) {
	if len(lines) <= maxLines && len(s) <= maxBytes {
		return truncation{content: s, outLines: len(lines), outBytes: len(s)}, true
	}
	return truncation{truncated: true}, false
}

// truncateHead keeps the first complete lines of s that fit in maxLines lines
// and maxBytes bytes. It never returns a partial line.
func truncateHead(s string, maxLines, maxBytes int) truncation {
	lines := strings.Split(s, "\n")
	t, fits := untruncated(s, lines, maxLines, maxBytes)
	if fits {
		return t
	}
	if len(lines[0]) > maxBytes {
		t.byBytes, t.firstLineTooLong = true, true
		return t
	}
	n, size := 0, 0
	for n < len(lines) && n < maxLines {
		add := len(lines[n])
		if n > 0 {
			add++
		}
		if size+add > maxBytes {
			t.byBytes = true
			break
		}
		size += add
		n++
	}
	t.content = strings.Join(lines[:n], "\n")
	t.outLines, t.outBytes = n, len(t.content)
	return t
}

// truncateTail keeps the last complete lines of s that fit in maxLines lines
// and maxBytes bytes. When the last line alone is longer than maxBytes its
// end is kept (lastLinePartial).
func truncateTail(s string, maxLines, maxBytes int) truncation {
	lines := strings.Split(s, "\n")
	t, fits := untruncated(s, lines, maxLines, maxBytes)
	if fits {
		return t
	}
	first, size := len(lines), 0
	for first > 0 && len(lines)-first < maxLines {
		add := len(lines[first-1])
		if first < len(lines) {
			add++
		}
		if size+add > maxBytes {
			t.byBytes = true
			if first == len(lines) {
				t.content = tailBytes(lines[first-1], maxBytes)
				t.outLines, t.outBytes, t.lastLinePartial = 1, len(t.content), true
				return t
			}
			break
		}
		size += add
		first--
	}
	t.content = strings.Join(lines[first:], "\n")
	t.outLines, t.outBytes = len(lines)-first, len(t.content)
	return t
}

// tailBytes returns the last at most n bytes of s, starting on a rune
// boundary.
func tailBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	start := len(s) - n
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[start:]
}

// truncateLine cuts a line to max characters, marking the cut.
func truncateLine(line string, max int) (string, bool) {
	if r := []rune(line); len(r) > max {
		return string(r[:max]) + "... [truncated]", true
	}
	return line, false
}

// listing is the result of grep, find or ls: lines, cut at MaxBytes, then
// the notices (limitNote, the byte limit's, then notes; "" for none),
// which details also records.
func listing(lines []string, details map[string]any, limitNote string, notes ...string) Result {
	tr := truncateHead(strings.Join(lines, "\n"), math.MaxInt, MaxBytes)
	byteNote := ""
	if tr.truncated {
		byteNote = formatSize(MaxBytes) + " limit reached"
		details["truncated"] = true
	}
	notices := slices.DeleteFunc(append([]string{limitNote, byteNote}, notes...), func(s string) bool { return s == "" })
	if len(notices) == 0 {
		return Result{Content: tr.content, Details: details}
	}
	return Result{Content: tr.content + "\n\n[" + strings.Join(notices, ". ") + "]", Details: details}
}

// formatSize renders a byte count the way pi does: 512B, 50.0KB, 1.2MB.
func formatSize(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1fKB", float64(n)/1024)
	default:
		return fmt.Sprintf("%.1fMB", float64(n)/(1024*1024))
	}
}
