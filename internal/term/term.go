// Package term tells whether a file is a terminal.
package term

import (
	"os"

	"golang.org/x/term"
)

// IsTerminal reports whether f is a terminal: a tty or pty that answers
// terminal requests. A character device is not enough: /dev/null is one
// too. A nil f is not a terminal.
func IsTerminal(f *os.File) bool {
	if f == nil {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}
