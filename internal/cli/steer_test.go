package cli

import (
	"strings"
	"testing"
)

// Issue 12: steer, follow-up and approve fail like the other signal
// commands: one line on stderr, exit 2 (bad arguments, no Temporal).
func TestCLI_SteerFollowUpApproveErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"steer without message", []string{"steer", "--session", "s1"}, "starter steer: missing MESSAGE"},
		{"follow-up without message", []string{"follow-up", "  "}, "starter follow-up: missing MESSAGE"},
		{"approve without id", []string{"approve", "--deny"}, "starter approve: want exactly one TOOLCALLID"},
		{"approve with two ids", []string{"approve", "a", "b"}, "want exactly one TOOLCALLID"},
		{"steer unreachable", []string{"steer", "--session", "s1", "look at main.go"}, "cannot reach Temporal at 127.0.0.1:1"},
		{"approve unreachable", []string{"approve", "--session", "s1", "call_1_0", "--deny", "--reason", "no"}, "cannot reach Temporal at 127.0.0.1:1"},
		{"queue with a stray word", []string{"queue", "promote"}, "starter queue: wrong arguments (usage: starter queue"},
		{"queue edit without text or kind", []string{"queue", "edit", "m1"}, "starter queue: wrong arguments"},
		{"queue rm without id", []string{"queue", "rm"}, "starter queue: wrong arguments"},
		{"queue clear with an id", []string{"queue", "clear", "m1"}, "starter queue: wrong arguments"},
		{"approve for the session with --deny", []string{"approve", "--for-session", "--deny", "call_1_0"}, "starter approve: --for-session allows calls: it does not go with --deny"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, nil, tc.args...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Fatalf("exit %d stderr %q, want exit %d and one line with %q", code, stderr, ExitUsage, tc.want)
			}
		})
	}
}
