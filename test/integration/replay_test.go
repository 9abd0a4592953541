package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/workflows"
)

// replayFixture and the other fixtures are the histories the workflows
// package replays in its unit tests (workflows/replay_test.go lists them
// and the command that records them all again).
var replayFixture = filepath.Join("..", "..", "workflows", "testdata", "prompt_retry_history.json")

// toolLoopFixture is the history of a tool loop with a retry and a
// threshold compaction in it.
var toolLoopFixture = filepath.Join("..", "..", "workflows", "testdata", "prompt_toolloop_history.json")

// compactFixture is the history of a manual compaction (the Compact
// workflow, `starter compact`) whose summary call is retried once, with
// its auto_retry events.
var compactFixture = filepath.Join("..", "..", "workflows", "testdata", "compact_retry_history.json")

// Determinism: the history of a real run (one retried 503, then success)
// replays on the current workflow code without a non-determinism error.
func TestIntegration_HistoryReplaysOnCurrentCode(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	run := e.prompt("replay", e503)
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("result %+v %v", res, err)
	}
	exportAndReplay(t, e, run.GetID(), run.GetRunID(), replayFixture)
}

// Determinism of the tool loop: a real run with tool calls, a retried 503
// between them and threshold compactions between turns replays on the
// current code.
func TestIntegration_ToolLoopHistoryReplaysOnCurrentCode(t *testing.T) {
	e := newEnv(t)
	e.s.Model.ContextWindow = 1000 // every answer is past the threshold
	e.s.Compaction.KeepRecentTokens = 10
	e.startWorker()
	in := client.PromptInput(e.s, "replay-loop", "write and read a note")
	in.Workspace = t.TempDir()
	in.Model.Faults = []string{`tool:write {"path":"note.txt","content":"hi"}`, e503,
		`tool:read {"path":"note.txt"}`, `text:done`}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("result %+v %v", res, err)
	}
	var compactions, tools, retries int
	for _, ev := range e.events("replay-loop") {
		switch ev.Type {
		case agent.EventAutoCompactionEnd:
			compactions++
		case agent.EventToolExecutionEnd:
			tools++
		case agent.EventAutoRetryStart:
			retries++
		}
	}
	if compactions == 0 || tools != 2 || retries != 1 {
		t.Fatalf("compactions %d tools %d retries %d: the fixture must hold all three", compactions, tools, retries)
	}
	exportAndReplay(t, e, run.GetID(), run.GetRunID(), toolLoopFixture)
}

// Determinism of the Compact workflow: a real manual compaction whose
// summary call fails with a 503, waits on a durable timer and succeeds
// (its verdict recorded) replays on the current code.
func TestIntegration_CompactHistoryReplaysOnCurrentCode(t *testing.T) {
	e := compactableSession(t, "replay-compact")
	in := workflows.CompactInputFrom(client.PromptInput(e.s, "replay-compact", ""), "")
	in.Model.SummaryFaults = []string{e503}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := e.k.Compact(ctx, in, nil)
	if err != nil || res.Status != agent.StatusCompleted || res.Result == nil {
		t.Fatalf("compact: %+v %v", res, err)
	}
	wf := workflows.WorkflowID("replay-compact") // its latest run is the compaction
	// The history must hold what the fixture is for: the backoff timer
	// of the retried summary call and its recorded verdict.
	var timers, markers int
	iter := e.c.GetWorkflowHistory(ctx, wf, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_TIMER_STARTED:
			timers++
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if ev.GetMarkerRecordedEventAttributes().GetMarkerName() == "SideEffect" {
				markers++
			}
		}
	}
	t.Logf("result %+v; %d timers, %d side-effect markers", res, timers, markers)
	if timers != 1 || markers != 1 {
		t.Fatalf("%d timers and %d side-effect markers: the fixture must hold one retried summary call with its verdict marker", timers, markers)
	}
	evs, err := e.k.Events(ctx, "replay-compact", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, ev := range evs {
		types = append(types, ev.Type)
	}
	if got := strings.Join(types, " "); got != "auto_retry_start auto_retry_end prompt_end" {
		t.Fatalf("events of the compaction: %s", got)
	}
	exportAndReplay(t, e, wf, "", compactFixture)
}

// exportAndReplay exports a run's history (to fixture with
// UPDATE_REPLAY_HISTORY=1) and replays it on the current code.
func exportAndReplay(t *testing.T, e *env, workflowID, runID, fixture string) {
	t.Helper()
	iter := e.c.GetWorkflowHistory(context.Background(), workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	hist := &historypb.History{}
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		hist.Events = append(hist.Events, ev)
	}
	data, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(hist)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "history.json")
	if os.Getenv("UPDATE_REPLAY_HISTORY") == "1" {
		path = fixture
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(workflows.Prompt, workflow.RegisterOptions{Name: workflows.PromptWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.Compact, workflow.RegisterOptions{Name: workflows.CompactWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.Bash, workflow.RegisterOptions{Name: workflows.BashWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.DeleteSession, workflow.RegisterOptions{Name: workflows.DeleteSessionWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.SessionWrite, workflow.RegisterOptions{Name: workflows.SessionWriteWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.ScheduledPrompt, workflow.RegisterOptions{Name: workflows.ScheduledPromptWorkflowName})
	r.RegisterWorkflowWithOptions(workflows.SessionRead, workflow.RegisterOptions{Name: workflows.SessionReadWorkflowName})
	if err := r.ReplayWorkflowHistoryFromJSONFile(nil, path); err != nil {
		t.Fatalf("replay of a fresh history: %v", err)
	}
}

// compactableSession starts a worker that keeps 10 recent tokens when
// compacting and runs two prompts in session, so a compaction has
// something to summarise.
func compactableSession(t *testing.T, session string) *env {
	t.Helper()
	e := newEnv(t)
	e.s.Compaction.KeepRecentTokens = 10
	e.startWorker()
	for range 2 {
		if res, err := e.result(e.prompt(session)); err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("prompt: %+v %v", res, err)
		}
	}
	return e
}
