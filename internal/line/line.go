// Package line shortens texts for one-line messages: errors, warnings and
// previews that a person reads on one terminal line.
//
// First keeps a text's first line (an error's headline, whatever detail
// follows it); Fold joins all of it onto one line (a multi-line value
// quoted inside a message). Neither ever returns a line break.
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
