package workflows

import (
	"os"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"

	"github.com/durableagent/durableagent/agent"
)

// A closed prompt's events are read from its history with no worker:
// replaying a recorded tool-loop prompt gives every event, from seq 1 to
// its prompt_end, in order; an after skips the earlier ones.
func TestEventsOfClosedRun_ReplaysTheEventsQuery(t *testing.T) {
	f, err := os.Open("testdata/prompt_toolloop_history.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hist, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	if err != nil {
		t.Fatal(err)
	}
	events, err := EventsOfClosedRun(hist, nil, nil) // the recorded run
	if err != nil {
		t.Fatal(err)
	}
	all, err := events(0)
	if err != nil || len(all) < 4 {
		t.Fatalf("events %v, %v", all, err)
	}
	for i, e := range all {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
	if last := all[len(all)-1]; last.Type != agent.EventPromptEnd {
		t.Fatalf("last event %s, want prompt_end", last.Type)
	}
	if tail, _ := events(int64(len(all) - 2)); len(tail) != 2 || tail[0].Seq != int64(len(all)-1) {
		t.Fatalf("events after %d: %v", len(all)-2, tail)
	}
	// A history that is not a workflow's fails with an error.
	hist.Events = hist.Events[:1]
	if _, err := EventsOfClosedRun(hist, &commonpb.WorkflowExecution{WorkflowId: "session-x", RunId: "r"}, nil); err == nil {
		t.Fatal("a one-event history replayed")
	}
}
