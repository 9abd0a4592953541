package integration

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
)

// budgetFixture is the history of a prompt its budget stopped: the
// duration timer, a retried 503 and the final message. Regenerate with UPDATE_REPLAY_HISTORY=1 go test
// -run BudgetStopsAPromptAndReplays ./test/integration
var budgetFixture = filepath.Join("..", "..", "workflows", "testdata", "prompt_budget_history.json")

// Issue 22 on the embedded server: a prompt with budget.* settings (as
// the starter sends them) runs a tool call, is stopped by
// budget.maxTokens before its next model call, names the limit in its
// prompt_end and result, and its history (with the budget's timer)
// replays on the current code.
func TestIntegration_BudgetStopsAPromptAndReplays(t *testing.T) {
	e := newEnv(t)
	e.s.Budget.MaxTokens = 1
	e.s.Budget.MaxDurationMs = 3_600_000
	e.startWorker()
	in := client.PromptInput(e.s, "budget", "write a note")
	in.Workspace = t.TempDir()
	in.Model.Faults = []string{e503, `tool:write {"path":"note.txt","content":"hi"}`, `text:never`}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.result(run)
	if err == nil || res.Status != agent.StatusFailed || !strings.HasPrefix(res.Error, "budget.maxTokens 1 reached: spent ") {
		t.Fatalf("result %+v %v, want failed naming budget.maxTokens", res, err)
	}
	evs := e.events("budget")
	var usage, tools int
	for _, ev := range evs {
		switch ev.Type {
		case agent.EventUsage:
			usage++
		case agent.EventToolExecutionEnd:
			tools++
		}
	}
	last := evs[len(evs)-1]
	if usage != 2 || tools != 1 || last.Type != agent.EventPromptEnd || last.ErrorMessage != res.Error {
		t.Fatalf("%d usage_update, %d tool calls, last %+v: want 2, 1 and prompt_end naming the limit", usage, tools, last)
	}
	var timers int
	iter := e.c.GetWorkflowHistory(context.Background(), run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetEventType() == enumspb.EVENT_TYPE_TIMER_STARTED {
			timers++
		}
	}
	if timers != 2 {
		t.Fatalf("%d timers, want the budget's and the retry's", timers)
	}
	exportAndReplay(t, e, run.GetID(), run.GetRunID(), budgetFixture)
}

// Issue 39 on the embedded server: a model call aborted mid-stream, after
// its stream reported the input it was billed for, keeps that usage: in
// its session entry, its message_end and the prompt's usage (before, the
// aborted message had none and the attempt counted nothing).
func TestIntegration_AnAbortedCallKeepsTheUsageItWasBilled(t *testing.T) {
	e := newEnv(t)
	e.s.Scripted.StreamDelayMs = 100
	e.startWorker()
	run := e.prompt("billed", `usage:{"input":900} text:`+strings.Repeat("word ", 150))
	e.waitStreaming("billed")
	time.Sleep(2 * time.Second) // the usage report comes before the first word
	if err := e.k.Abort(context.Background(), "billed"); err != nil {
		t.Fatal(err)
	}
	res, _ := e.result(run)
	end, entry := e.firstAnswer("billed")
	if res.Status != agent.StatusAborted || entry.Message.StopReason != agent.StopReasonAborted {
		t.Fatalf("result %+v, entry %+v: want aborted mid-stream", res, entry.Message)
	}
	if u := entry.Message.Usage; u == nil || u.Input != 900 || end.Message.Usage == nil || end.Message.Usage.Input != 900 {
		t.Fatalf("aborted call: entry usage %+v, message_end usage %+v; want the 900 input tokens reported", u, end.Message.Usage)
	}
	if res.Usage == nil || res.Usage.Input != 900 || res.Usage.Unmetered != 0 {
		t.Fatalf("prompt usage %+v, want the aborted call's 900 input tokens", res.Usage)
	}
}
