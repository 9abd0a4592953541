package tools

import (
	"path"
	"strings"
)

// A globPattern matches slash-separated relative paths. It supports "*" and
// "?" (never matching "/"), "[...]" classes ("[!...]" or "[^...]" negated),
// "**" as a whole segment (any number of directories; a trailing "**" needs
// at least one segment), "{a,b}" alternatives and "\" escapes.
type globPattern struct {
	alts [][]string // segments of each brace alternative
}

// maxBraceExpansions bounds "{a,b}{c,d}..." expansion.
const maxBraceExpansions = 256

func compileGlob(p string) *globPattern {
	g := &globPattern{}
	for _, alt := range expandBraces(p, maxBraceExpansions) {
		alt = strings.TrimPrefix(alt, "./")
		alt = strings.TrimPrefix(alt, "/")
		segs := strings.Split(alt, "/")
		for i, s := range segs {
			segs[i] = convertClass(s)
		}
		g.alts = append(g.alts, segs)
	}
	return g
}

// hasSlash reports whether the pattern names a path rather than a file
// name (then it is matched against the whole relative path).
func (g *globPattern) hasSlash() bool {
	for _, a := range g.alts {
		if len(a) > 1 {
			return true
		}
	}
	return false
}

// match reports whether the slash-separated relative path rel matches.
func (g *globPattern) match(rel string) bool {
	name := strings.Split(rel, "/")
	for _, a := range g.alts {
		if matchSegments(a, name) {
			return true
		}
	}
	return false
}

// matchSegments matches path segments against pattern segments.
func matchSegments(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 1 && pat[1] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 1 {
				return len(name) > 0
			}
			for i := 0; i <= len(name); i++ {
				if matchSegments(pat[1:], name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 || !matchSegment(pat[0], name[0]) {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// matchSegment matches one path segment; a malformed pattern matches
// nothing.
func matchSegment(pat, name string) bool {
	ok, err := path.Match(pat, name)
	return err == nil && ok
}

// convertClass rewrites the glob class negation "[!" into path.Match's "[^".
func convertClass(s string) string {
	if !strings.Contains(s, "[!") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			b.WriteString(s[i : i+2])
			i++
			continue
		}
		if s[i] == '[' && i+1 < len(s) && s[i+1] == '!' {
			b.WriteString("[^")
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// expandBraces expands "{a,b}" alternatives (nested allowed) into at most
// limit patterns. A brace group without a top-level comma stays literal.
func expandBraces(p string, limit int) []string {
	open := -1
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			alts := splitTopLevel(p[open+1 : i])
			if len(alts) < 2 {
				open = -1
				continue
			}
			prefix, rest := p[:open], p[i+1:]
			var out []string
			for _, a := range alts {
				for _, e := range expandBraces(prefix+a+rest, limit) {
					if len(out) >= limit {
						return out
					}
					out = append(out, e)
				}
			}
			return out
		}
	}
	return []string{p}
}

// splitTopLevel splits s at the commas outside nested braces.
func splitTopLevel(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
