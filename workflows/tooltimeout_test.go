package workflows

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

// Issue 20 item 1, spec 13.4 (a bad tool argument is an error result): a
// bash call whose timeout argument is past what the activity's
// start-to-close timeout can hold (9.3e9 s overflows time.Duration once
// the margin is added; Temporal refused the negative timeout and failed
// the workflow task on every retry, wedging the session) gets an error
// result naming the value and the maximum, the command does not run, and
// the prompt goes on to the model's next answer and completes.
func TestPrompt_BashTimeoutAboveTheMaximumIsAnErrorResult(t *testing.T) {
	for name, tc := range map[string]struct{ arg, want string }{
		"9.2e9 s":             {`9.2e9`, "bash: timeout 9200000000 s is above the maximum of 86400 s (24 hours); call bash again with a timeout from 0 (none) to 86400 seconds"},
		"9.3e9 s (overflows)": {`9.3e9`, "bash: timeout 9300000000 s is above the maximum of 86400 s (24 hours); call bash again with a timeout from 0 (none) to 86400 seconds"},
		"a quoted 1e300":      {`"1e300"`, "bash: timeout 1e+300 s is above the maximum of 86400 s (24 hours); call bash again with a timeout from 0 (none) to 86400 seconds"},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			res, err := h.run(h.toolInput(`tool:bash {"command":"touch ran","timeout":`+tc.arg+`}`, `text:done`))
			if err != nil || res.Status != agent.StatusCompleted || res.Text != "done" {
				t.Fatalf("prompt: %+v %v, want it to complete after the error result", res, err)
			}
			if len(h.calls) != 2 {
				t.Fatalf("%d model calls, want 2 (the model is told its argument was refused)", len(h.calls))
			}
			var end agent.Event
			for _, e := range h.events() {
				if e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleToolResult {
					end = e
				}
			}
			if end.Message == nil || !end.Message.IsError || end.Message.Text() != tc.want {
				t.Fatalf("tool result %+v, want the error %q", end.Message, tc.want)
			}
			if _, err := os.Stat(filepath.Join(h.workspace, "ran")); err == nil {
				t.Fatal("the command ran although its timeout was refused")
			}
		})
	}
}
