package workflows

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
)

// Issue 15 item 10: a session file the store refuses for good (a bad
// header, a newer format version, a directory in its place) fails the
// prompt at once — one attempt of the session's local activity, not five
// over ~7 s — with the file and the problem named.
func TestPrompt_PermanentSessionFileErrorFailsAtOnce(t *testing.T) {
	for name, tc := range map[string]struct {
		make func(path string) error
		want string
	}{
		"bad header": {func(p string) error { return os.WriteFile(p, []byte("hello\n"), 0o600) }, "line 1 is not a session header"},
		"newer format version": {func(p string) error {
			return os.WriteFile(p, []byte(fmt.Sprintf(`{"type":"session","version":%d,"id":"s1"}`+"\n", session.FormatVersion+1)), 0o600)
		}, "newer than this build reads"},
		"directory": {func(p string) error { return os.Mkdir(p, 0o700) }, "is a directory"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			path := h.store.Path("s1")
			if err := tc.make(path); err != nil {
				t.Fatal(err)
			}
			attempts := 0
			h.env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []interface{}) {
				attempts++
			})
			_, err := h.run(input())
			status, msg := promptStatus(t, err)
			if status != agent.StatusFailed || !strings.Contains(msg, path) || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Fatalf("prompt %s %q, want failed with one line naming %s and %q", status, msg, path, tc.want)
			}
			if attempts != 1 {
				t.Fatalf("%d attempts of the session's local activity, want 1 (a permanent error is not retried)", attempts)
			}
			if len(h.calls) != 0 {
				t.Fatalf("the model was called %d times", len(h.calls))
			}
		})
	}
}
