package tools

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// A globPattern matches slash-separated relative paths with doublestar:
// "*" and "?" (never matching "/"), "[...]" classes ("[!...]" or "[^...]"
// negated), "**" as a whole segment (any number of directories), "{a,b}"
// alternatives and "\" escapes. Three rules of the tools' glob differ from
// doublestar's and are kept by compileGlob:
//   - a trailing "/**" needs at least one segment ("src/**" does not match
//     "src" itself);
//   - a brace is special only in a group with a top-level comma ("{x}" and
//     a lone "{" or "}" are literal);
//   - a leading "./" or "/" is dropped (paths are relative to the search
//     directory).
type globPattern struct {
	pattern string // the doublestar pattern
	err     error  // why the pattern is not valid; it then matches nothing
}

// maxBraceAlternatives bounds the number of paths "{a,b}{c,d}..." can
// spell: matching tries every combination, so a model's pattern must not
// multiply them without end.
const maxBraceAlternatives = 256

// compileGlob prepares p. A pattern that is not valid matches nothing and
// carries the reason in err (a one-line error naming the pattern).
func compileGlob(p string) *globPattern {
	q, alts := literalBraces(p)
	if alts > maxBraceAlternatives {
		return &globPattern{err: fmt.Errorf("glob pattern %q has more than %d brace alternatives", p, maxBraceAlternatives)}
	}
	q = strings.TrimPrefix(q, "./")
	q = strings.TrimPrefix(q, "/")
	if strings.HasSuffix(q, "/**") {
		q += "/*" // doublestar's "x/**" also matches "x"
	}
	if !doublestar.ValidatePattern(q) {
		return &globPattern{err: fmt.Errorf("glob pattern %q is not valid: %w", p, doublestar.ErrBadPattern)}
	}
	return &globPattern{pattern: q}
}

// matchFile reports whether the file at abs, found under root, matches:
// its path relative to root when the pattern has a "/", else its name.
func (g *globPattern) matchFile(root, abs string) bool {
	rel, _ := filepath.Rel(root, abs)
	if !strings.Contains(g.pattern, "/") {
		rel = filepath.Base(abs)
	}
	return g.match(filepath.ToSlash(rel))
}

// match reports whether the slash-separated relative path rel matches.
func (g *globPattern) match(rel string) bool {
	if g.err != nil {
		return false
	}
	ok, err := doublestar.Match(g.pattern, rel)
	return err == nil && ok
}

// literalBraces escapes every brace of p that is not part of a "{a,b}"
// group with a top-level comma, and returns the product of the groups'
// alternative counts (an upper bound on the paths p spells).
func literalBraces(p string) (string, int) {
	type group struct{ open, commas int }
	var stack []group
	special := make(map[int]bool) // byte offsets of braces that open or close a group
	alts := 1
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			stack = append(stack, group{open: i})
		case ',':
			if len(stack) > 0 {
				stack[len(stack)-1].commas++
			}
		case '}':
			if len(stack) == 0 {
				continue
			}
			g := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if g.commas > 0 {
				special[g.open], special[i] = true, true
				alts = min(alts*(g.commas+1), maxBraceAlternatives+1)
			}
		}
	}
	return escapeBraces(p, special), alts
}

// escapeBraces escapes every brace of p but those at the byte offsets in
// keep (nil: every brace), leaving escapes ("\\x") as they are.
func escapeBraces(p string, keep map[int]bool) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p):
			b.WriteString(p[i : i+2])
			i++
			continue
		case (p[i] == '{' || p[i] == '}') && !keep[i]:
			b.WriteByte('\\')
		}
		b.WriteByte(p[i])
	}
	return b.String()
}
