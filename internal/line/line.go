// Package line shortens texts for one-line messages: errors, warnings and
// previews that a person reads on one terminal line.
//
// First keeps a text's first line (an error's headline, whatever detail
// follows it); Fold joins all of it onto one line (a multi-line value
// quoted inside a message). Neither ever returns a line break. Cut bounds
// a text's length in runes, marking the cut; Preview is Fold then Cut.
package line

import "strings"

// First returns s up to its first line break.
func First(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Fold returns s with every run of white space (line breaks included)
// replaced by one space, and without leading or trailing space.
func Fold(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Cut returns s when it has at most n runes; otherwise its first n-1
// runes and "…", n runes in all.
func Cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:max(n-1, 0)]) + "…"
	}
	return s
}

// Preview returns Fold(s) cut to at most n runes (Cut): a text shown on
// one line of a listing.
func Preview(s string, n int) string { return Cut(Fold(s), n) }
