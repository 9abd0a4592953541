package integration

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
)

// Issue 23: everywhere a tool result is previewed, the whole result is a
// flag or a command away, read from the session store: `prompt --full`
// and `events --full` print every line of a 40-line output (without the
// flag: its last lines), `events --full --json` carries it in the event,
// and `show --session S ENTRY` prints the result entry whole.
func TestIntegration_FullResultsInPromptEventsAndShow(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	const bash = `tool:bash {"command":"seq -f line%g 1 40"}`

	code, out, stderr := e.starter("prompt", "--session", "full", "--full", "--fault", bash, "count")
	if code != cli.ExitOK || !strings.Contains(out, "line1\n") || !strings.Contains(out, "line40\n") {
		t.Fatalf("prompt --full: exit %d, the output lacks line1 or line40\n%s%s", code, out, stderr)
	}
	if code, out, _ = e.starter("events", "--session", "full"); code != cli.ExitOK || strings.Contains(out, "line2\n") || !strings.Contains(out, "line40\n") {
		t.Fatalf("events without --full: exit %d, want the last lines only\n%s", code, out)
	}
	if code, out, _ = e.starter("events", "--session", "full", "--full"); code != cli.ExitOK || !strings.Contains(out, "line2\n") || !strings.Contains(out, "line40\n") {
		t.Fatalf("events --full: exit %d, want every line\n%s", code, out)
	}
	code, out, _ = e.starter("events", "--session", "full", "--full", "--json")
	var entry string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var ev agent.Event
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("events --json line %q: %v", l, err)
		}
		if ev.Type == agent.EventToolExecutionEnd {
			entry = ev.EntryID
			if b, _ := json.Marshal(ev.ToolResult); !strings.Contains(string(b), `line1\n`) || !strings.Contains(string(b), "line40") {
				t.Fatalf("events --full --json: the result is not whole: %s", b)
			}
		}
	}
	if code != cli.ExitOK || entry == "" {
		t.Fatalf("events --full --json: exit %d, no tool_execution_end with an entryId\n%s", code, out)
	}
	if code, out, stderr = e.starter("show", "--session", "full", entry); code != cli.ExitOK || !strings.Contains(out, "line1\n") || !strings.Contains(out, "line40\n") {
		t.Fatalf("show %s: exit %d\n%s%s", entry, code, out, stderr)
	}
}
