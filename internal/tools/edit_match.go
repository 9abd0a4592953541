package tools

import (
	"cmp"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The fuzzy match of edit: when oldText is not in the file exactly, both are
// compared in a normalised form (CRLF as LF, trailing whitespace of every line
// dropped, curly quotes, Unicode dashes and special spaces as ASCII) and the
// match is mapped back onto the original bytes, so only the matched region of
// the file changes.

// fuzzyRune maps one rune to its normalised form, or "" to keep it as is.
func fuzzyRune(r rune) string {
	switch r {
	case '\u2018', '\u2019', '\u201A', '\u201B':
		return "'"
	case '\u201C', '\u201D', '\u201E', '\u201F':
		return `"`
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
		return "-"
	case '\u00A0', '\u202F', '\u205F', '\u3000':
		return " "
	}
	if r >= '\u2002' && r <= '\u200A' {
		return " "
	}
	return ""
}

// fuzzyWalk emits the normalised form of s piece by piece, each with the
// span of s it came from.
func fuzzyWalk(s string, emit func(out string, from, to int)) {
	i := 0
	for {
		j := strings.IndexByte(s[i:], '\n')
		end := len(s)
		if j >= 0 {
			end = i + j
		}
		line := s[i:end]
		keep := len(strings.TrimRightFunc(line, unicode.IsSpace))
		for k := 0; k < keep; {
			r, size := utf8.DecodeRuneInString(line[k:])
			emit(cmp.Or(fuzzyRune(r), line[k:k+size]), i+k, i+k+size)
			k += size
		}
		if j < 0 {
			return
		}
		emit("\n", end, end+1)
		i = end + 1
	}
}

// fuzzyNormalize returns the normalised form of s.
func fuzzyNormalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	fuzzyWalk(s, func(out string, _, _ int) { b.WriteString(out) })
	return b.String()
}

// fuzzySpan maps the match norm[a:b] of the normalised form of s back onto s.
// A match that ends a line also takes the line's trailing whitespace (but not
// the CR of a CRLF), which the normalised form had dropped.
func fuzzySpan(s string, a, b int) (from, to int) {
	pos := 0
	from, to = -1, -1
	fuzzyWalk(s, func(out string, f, t int) {
		if from < 0 && a >= pos && a < pos+len(out) {
			from = f
		}
		if to < 0 && b-1 >= pos && b-1 < pos+len(out) {
			to = t
		}
		pos += len(out)
	})
	if from < 0 || to < 0 {
		return -1, -1
	}
	if s[to-1] != '\n' {
		e := to
		for e < len(s) && s[e] != '\n' {
			r, size := utf8.DecodeRuneInString(s[e:])
			if !unicode.IsSpace(r) {
				return from, to
			}
			e += size
		}
		if e < len(s) && e > to && s[e-1] == '\r' {
			e--
		}
		to = e
	}
	return from, to
}

// indexAll returns the start of every non-overlapping occurrence of sub in s.
func indexAll(s, sub string) []int {
	var out []int
	if sub == "" {
		return out
	}
	for i := 0; ; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			return out
		}
		out = append(out, i+j)
		i += j + len(sub)
	}
}

// Diff rendering bounds.
const (
	diffContext  = 3
	diffMaxLines = 40
	// diffLineLength cuts long lines (minified files) in the diff.
	diffLineLength = 200
)

// renderDiff renders a bounded, numbered line diff between before and after,
// which differ in one region: the common leading and trailing lines are
// context. It returns the diff and the first changed line (1-based, in after).
func renderDiff(before, after string) (string, int) {
	ol := strings.Split(before, "\n")
	nl := strings.Split(after, "\n")
	p := 0
	for p < len(ol) && p < len(nl) && ol[p] == nl[p] {
		p++
	}
	s := 0
	for s < len(ol)-p && s < len(nl)-p && ol[len(ol)-1-s] == nl[len(nl)-1-s] {
		s++
	}
	width := len(fmt.Sprint(max(len(ol), len(nl))))
	var b strings.Builder
	line := func(mark byte, n int, text string) {
		text, _ = truncateLine(strings.TrimSuffix(text, "\r"), diffLineLength)
		fmt.Fprintf(&b, "%c%*d %s\n", mark, width, n, text)
	}
	block := func(mark byte, lines []string, first int) {
		for i, l := range lines {
			if i == diffMaxLines {
				fmt.Fprintf(&b, "%c%*s ... (%d more lines)\n", mark, width, "", len(lines)-i)
				return
			}
			line(mark, first+i, l)
		}
	}
	lead := max(0, p-diffContext)
	if lead > 0 {
		fmt.Fprintf(&b, " %*s ...\n", width, "")
	}
	for i := lead; i < p; i++ {
		line(' ', i+1, ol[i])
	}
	block('-', ol[p:len(ol)-s], p+1)
	block('+', nl[p:len(nl)-s], p+1)
	tail := len(nl) - s
	for i := tail; i < len(nl) && i < tail+diffContext; i++ {
		line(' ', i+1, nl[i])
	}
	if tail+diffContext < len(nl) {
		fmt.Fprintf(&b, " %*s ...\n", width, "")
	}
	return strings.TrimSuffix(b.String(), "\n"), p + 1
}
