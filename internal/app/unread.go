package app

import (
	"fmt"
	"io"

	"github.com/durableagent/durableagent/internal/settings"
)

// WarnUnread writes to w, one line each ("worker: warning: ..."), the
// settings a worker was given by flag, environment or settings file and
// does not read (settings.Unread with reads, e.g. settings.WorkerReads):
// a prompt setting such as tools.requireApproval is named with where it
// takes effect, not ignored in silence. The error is settings.Load's.
func WarnUnread(w io.Writer, opts settings.LoadOptions, reads func(settings.KeyInfo) bool) error {
	lines, err := settings.Unread(opts, "the worker", reads)
	if err != nil {
		return err
	}
	for _, l := range lines {
		fmt.Fprintf(w, "worker: warning: %s\n", l)
	}
	return nil
}
