package integration

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdkclient "go.temporal.io/sdk/client"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/workflows"
)

// Issue 23: everywhere a tool result is previewed, the whole result is a
// flag or a command away, read from the session store: `prompt --full`
// and `events --full` print every line of a 40-line output (without the
// flag: its last lines), `events --full --json` carries it in the event,
// and `show --session S ENTRY` prints the result entry whole; a wrong
// entry or session is one clear line. Every read goes through the workers.
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
	if code, out, _ = e.starter("show", "--session", "full", "--json", entry); code != cli.ExitOK || !strings.Contains(out, `"id":"`+entry+`"`) {
		t.Fatalf("show --json %s: exit %d %s", entry, code, out)
	}
	// One read's history is the SessionRead workflow's replay fixture
	// (regenerate with UPDATE_REPLAY_HISTORY=1 and -run FullResults).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run, err := e.c.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: "session-read-fixture", TaskQueue: e.s.Temporal.TaskQueue},
		workflows.SessionReadWorkflowName, activities.ReadSessionInput{SessionID: "full", EntryID: entry})
	var page activities.ReadSessionResult
	if err == nil {
		err = run.Get(ctx, &page)
	}
	if err != nil || len(page.Entries) != 1 || page.Entries[0].ID != entry {
		t.Fatalf("SessionRead of %s: %+v %v", entry, page, err)
	}
	exportAndReplay(t, e, run.GetID(), run.GetRunID(), filepath.Join("..", "..", "workflows", "testdata", "session_read_history.json"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"show", "--session", "full", "e9"}, `session full has no entry "e9"`},
		{[]string{"show", "--session", "nosuch", entry}, `no session "nosuch"`},
	} {
		code, _, errOut := e.starter(tc.args...)
		if code != cli.ExitUsage || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Fatalf("%v: exit %d, stderr %q; want one line with %q", tc.args, code, errOut, tc.want)
		}
	}
}
