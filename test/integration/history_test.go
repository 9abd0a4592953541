package integration

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/internal/client"
)

// README ("Conversation bodies live in the session file"): without a
// payload codec, a prompt's Temporal history holds in plain text its own
// message (the workflow input and its summary), the answer (the model
// call's result and the workflow result) and a tool result's preview,
// but not the rest of a tool's output nor an earlier prompt's message or
// answer: those bodies live in the session file only.
func TestIntegration_HistoryHoldsWhatTheREADMESays(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	ws := t.TempDir()
	const (
		earlierMessage = "EARLIER-MESSAGE-BODY-51c2"
		earlierAnswer  = "EARLIER-ANSWER-BODY-9d0e"
		message        = "PROMPT-MESSAGE-BODY-3b7a"
		answer         = "FINAL-ANSWER-BODY-e4f1"
		toolHead       = "TOOL-OUTPUT-HEAD-0a9b"
		toolTail       = "TOOL-OUTPUT-TAIL-77c3"
	)
	// The tail is past the preview: only the session file may hold it.
	notes := toolHead + " " + strings.Repeat("x", 2*activities.PreviewChars) + " " + toolTail + "\n"
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte(notes), 0o644); err != nil {
		t.Fatal(err)
	}
	start := func(msg string, faults ...string) (workflowID, runID string) {
		in := client.PromptInput(e.s, "hist", msg)
		in.Workspace = ws
		in.Model.Faults = faults
		run, err := e.k.StartPrompt(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.result(run); err != nil {
			t.Fatalf("prompt %q: %v", msg, err)
		}
		return run.GetID(), run.GetRunID()
	}
	start("first: "+earlierMessage, "text:"+earlierAnswer)
	id, runID := start("second: "+message, `tool:read {"path":"notes.txt"}`, "text:"+answer)

	// The session file holds every body.
	file, err := os.ReadFile(filepath.Join(e.dataDir, "sessions", "hist.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{earlierMessage, earlierAnswer, message, answer, toolTail} {
		if !bytes.Contains(file, []byte(body)) {
			t.Fatalf("the session file lacks %s", body)
		}
	}

	h := history(t, e, id, runID)
	for _, body := range []string{toolTail, earlierMessage, earlierAnswer} {
		if bytes.Contains(h.all, []byte(body)) {
			t.Errorf("history holds %s in plain text", body)
		}
	}
	for _, tc := range []struct {
		where string
		data  []byte
		want  string
	}{
		{"the workflow input", h.input, message},
		{"the workflow's summary", h.summary, message},
		{"the CallModel result", h.results[activities.CallModelName], answer},
		{"the workflow result", h.result, answer},
		{"the RunTool result (preview)", h.results[activities.RunToolName], toolHead},
	} {
		if !bytes.Contains(tc.data, []byte(tc.want)) {
			t.Errorf("%s lacks %s: %q", tc.where, tc.want, tc.data)
		}
	}
}

// promptHistory is one run's history: every event's bytes, and the
// payloads the README names.
type promptHistory struct {
	all, input, summary, result []byte
	// results are the completed activities' results by activity type.
	results map[string][]byte
}

func history(t *testing.T, e *env, workflowID, runID string) promptHistory {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := promptHistory{results: map[string][]byte{}}
	types := map[int64]string{}
	it := e.c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		b, err := proto.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		h.all = append(h.all, b...)
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			h.input = payloadData(ev.GetWorkflowExecutionStartedEventAttributes().GetInput())
			h.summary = ev.GetUserMetadata().GetSummary().GetData()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			types[ev.GetEventId()] = ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			a := ev.GetActivityTaskCompletedEventAttributes()
			name := types[a.GetScheduledEventId()]
			h.results[name] = append(h.results[name], payloadData(a.GetResult())...)
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
			h.result = payloadData(ev.GetWorkflowExecutionCompletedEventAttributes().GetResult())
		}
	}
	if len(h.input) == 0 || len(h.result) == 0 || len(h.results) == 0 {
		t.Fatalf("history of %s/%s is missing its input, result or activities", workflowID, runID)
	}
	return h
}

func payloadData(ps *commonpb.Payloads) []byte {
	var out []byte
	for _, p := range ps.GetPayloads() {
		out = append(out, p.GetData()...)
	}
	return out
}
