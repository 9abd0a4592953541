package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/compaction"
	"github.com/durableagent/durableagent/internal/session"
)

// toolInput is a prompt with the seven tools in h's workspace and a
// model script.
func (h *harness) toolInput(script ...string) PromptInput {
	in := input(script...)
	in.Workspace = h.workspace
	in.Tools = agent.Tools{Enabled: []string{"read", "write", "edit", "bash", "grep", "find", "ls"}}
	return in
}

// toolResults returns the session's toolResult messages in chain order.
func (h *harness) branch(leaf string) []session.Entry {
	h.t.Helper()
	sess, err := h.store.Load("s1")
	if err != nil {
		h.t.Fatal(err)
	}
	return sess.Branch(leaf)
}

func roles(entries []session.Entry) []string {
	var out []string
	for _, e := range entries {
		if e.Message != nil {
			out = append(out, string(e.Message.Role))
		}
	}
	return out
}

func withoutTypes(evs []agent.Event, drop ...string) []string {
	var out []string
	for _, e := range evs {
		skip := false
		for _, d := range drop {
			skip = skip || e.Type == d
		}
		if !skip {
			out = append(out, e.Type)
		}
	}
	return out
}

// Issue 10 (the loop): tool calls run in the workspace, one toolResult
// per call feeds the next model call, and the events come in the terminal
// agent's order.
func TestLoop_ToolCallsFeedTheNextTurnInOrder(t *testing.T) {
	h := newHarness(t)
	res, err := h.run(h.toolInput(
		`tool:write {"path":"notes.txt","content":"hello\n"}`,
		`tool:read {"path":"notes.txt"}`,
		`text:wrote and read notes.txt`,
	))
	if err != nil {
		t.Fatalf("prompt: %v", err)
	}
	if res.Text != "wrote and read notes.txt" {
		t.Fatalf("answer %q", res.Text)
	}
	if b, err := os.ReadFile(filepath.Join(h.workspace, "notes.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("notes.txt = %q, %v", b, err)
	}
	want := []string{
		"agent_start", "turn_start", "message_start", "message_end", // the user message
		"message_start", "message_end", // assistant: write
		"tool_execution_start", "tool_execution_end", "message_start", "message_end", "turn_end",
		"turn_start", "message_start", "message_end", // assistant: read
		"tool_execution_start", "tool_execution_end", "message_start", "message_end", "turn_end",
		"turn_start", "message_start", "message_end", "turn_end", // the answer
		"agent_end", "prompt_end",
	}
	evs := h.events()
	if got := types(evs); !equal(got, want) {
		t.Fatalf("events:\n%v\nwant:\n%v", got, want)
	}
	if got := roles(h.branch(res.LeafID)); strings.Join(got, ",") != "user,assistant,toolResult,assistant,toolResult,assistant" {
		t.Fatalf("session branch %v", got)
	}
	// The read's result (second tool result) reached the third model call.
	var readEnd agent.Event
	for _, e := range evs {
		if e.Type == agent.EventToolExecutionEnd && e.ToolName == "read" {
			readEnd = e
		}
	}
	if readEnd.IsError || readEnd.ToolResult == nil || !strings.Contains(readEnd.ToolResult.Content[0].Text, "hello") {
		t.Fatalf("read result %+v", readEnd.ToolResult)
	}
	if len(h.calls) != 3 || h.calls[2].LeafID != readEnd.EntryID {
		t.Fatalf("third model call starts at %q, want the read result %q", h.calls[2].LeafID, readEnd.EntryID)
	}
	for _, e := range evs {
		if e.Type == agent.EventTurnEnd && e.Turn == 1 && (len(e.ToolResults) != 1 || e.ToolResults[0].ToolName != "write") {
			t.Fatalf("turn_end 1 tool results %+v", e.ToolResults)
		}
	}
}

// Issue 10 + SPEC 3: a 503 at a later turn retries that turn on its
// durable timer and never runs the tools of earlier turns again.
func TestLoop_RetryAtLaterTurnDoesNotRerunTools(t *testing.T) {
	h := newHarness(t)
	res, err := h.run(h.toolInput(
		`tool:bash {"command":"echo ran >> count.txt"}`,
		e503,
		`text:done`,
	))
	if err != nil {
		t.Fatalf("prompt: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(h.workspace, "count.txt"))
	if string(b) != "ran\n" {
		t.Fatalf("count.txt = %q, want the command to have run once", b)
	}
	if len(h.tools) != 1 || len(h.calls) != 3 {
		t.Fatalf("tool calls %d model calls %d, want 1 and 3", len(h.tools), len(h.calls))
	}
	if h.calls[1].LeafID != h.calls[2].LeafID {
		t.Fatalf("the retry starts at %s, the failed call at %s: the error must leave the run context", h.calls[2].LeafID, h.calls[1].LeafID)
	}
	got := retryEvents(t, h.events())
	if len(got) != 2 || !strings.Contains(got[1], `"success":true`) {
		t.Fatalf("retry events %v", got)
	}
	g := gaps(h.events())
	if len(g) != 1 || g[0] != 2*time.Second {
		t.Fatalf("durable wait %v, want 2s", g)
	}
	if res.Text != "done" {
		t.Fatalf("answer %q", res.Text)
	}
}

// Issue 10: abort during a tool call kills the command (its process
// group), records the aborted result and ends the prompt as aborted.
func TestLoop_AbortDuringBashKillsItAndRecordsTheResult(t *testing.T) {
	h := newHarness(t)
	h.abortWhileToolRuns("started")
	started := time.Now()
	_, err := h.run(h.toolInput(`tool:bash {"command":"touch started; sleep 30; echo late > late.txt"}`, `text:never`))
	if status, _ := promptStatus(t, err); status != agent.StatusAborted {
		t.Fatalf("status %q, want aborted", status)
	}
	if d := time.Since(started); d > 15*time.Second {
		t.Fatalf("abort took %v: the command was not killed", d)
	}
	if _, err := os.Stat(filepath.Join(h.workspace, "late.txt")); err == nil {
		t.Fatal("late.txt exists: the command kept running")
	}
	evs := h.events()
	end, ok := findEvent(evs, agent.EventToolExecutionEnd)
	if !ok || !end.IsError {
		t.Fatalf("tool_execution_end %+v", end)
	}
	sess, _ := h.store.Load("s1")
	e, ok := sess.Get(end.EntryID)
	if !ok || e.Message == nil || !e.Message.IsError || !strings.Contains(strings.ToLower(e.Message.Text()), "abort") {
		t.Fatalf("session result %+v", e.Message)
	}
	if len(h.calls) != 1 {
		t.Fatalf("model calls %d, want 1", len(h.calls))
	}
	if got := withoutTypes(evs)[len(evs)-3:]; !equal(got, []string{"turn_end", "agent_end", "prompt_end"}) {
		t.Fatalf("last events %v", got)
	}
}

// Issue 10: several read-only calls of one answer run together; their
// results are appended in the order of the calls, each the parent of the
// next.
func TestLoop_ParallelCallsAppendResultsInCallOrder(t *testing.T) {
	h := newHarness(t)
	for _, f := range []string{"a.txt", "b.txt"} {
		if err := os.WriteFile(filepath.Join(h.workspace, f), []byte("content of "+f), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	res, err := h.run(h.toolInput(
		`tools:[{"name":"read","arguments":{"path":"a.txt"}},{"name":"read","arguments":{"path":"b.txt"}},{"name":"ls","arguments":{}}]`,
		`text:done`,
	))
	if err != nil {
		t.Fatalf("prompt: %v", err)
	}
	branch := h.branch(res.LeafID)
	var names []string
	for _, e := range branch {
		if e.Message != nil && e.Message.Role == agent.RoleToolResult {
			names = append(names, e.Message.ToolName+":"+strings.SplitN(e.Message.Text(), "\n", 2)[0])
		}
	}
	if len(names) != 3 || names[0] != "read:content of a.txt" || names[1] != "read:content of b.txt" || !strings.HasPrefix(names[2], "ls:") {
		t.Fatalf("results in branch order %v", names)
	}
	var starts, ends []string
	for _, e := range h.events() {
		switch e.Type {
		case agent.EventToolExecutionStart:
			starts = append(starts, e.ToolCallID)
		case agent.EventToolExecutionEnd:
			ends = append(ends, e.ToolCallID)
		}
	}
	if strings.Join(starts, ",") != strings.Join(ends, ",") || len(starts) != 3 {
		t.Fatalf("starts %v ends %v", starts, ends)
	}
}

// Issue 10: agent.maxTurns stops a runaway loop with a clear message.
func TestLoop_MaxTurnsStopsARunawayLoop(t *testing.T) {
	h := newHarness(t)
	in := h.toolInput(`tool:ls {}`, `tool:ls {}`, `tool:ls {}`, `text:never`)
	in.Agent.MaxTurns = 2
	_, err := h.run(in)
	status, msg := promptStatus(t, err)
	if status != agent.StatusFailed || msg != fmt.Sprintf(MaxTurnsMessage, 2) {
		t.Fatalf("status %q error %q", status, msg)
	}
	if len(h.calls) != 2 || len(h.tools) != 2 {
		t.Fatalf("model calls %d tool calls %d, want 2 and 2", len(h.calls), len(h.tools))
	}
}

// Issue 10 (providers): arguments that are not JSON become an error tool
// result the model can correct; the loop goes on.
func TestLoop_InvalidJSONArgumentsBecomeAnErrorResult(t *testing.T) {
	h := newHarness(t)
	target := filepath.Join(h.workspace, "x.txt")
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := h.run(h.toolInput(`badtool:edit {"path": "x.txt", "oldText": "old"`, `text:fixed it`))
	if err != nil || res.Text != "fixed it" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	end, _ := findEvent(h.events(), agent.EventToolExecutionEnd)
	if !end.IsError || !strings.Contains(end.ToolResult.Content[0].Text, "not a JSON object") {
		t.Fatalf("result %+v", end.ToolResult)
	}
	if b, _ := os.ReadFile(target); string(b) != "old" {
		t.Fatalf("x.txt changed to %q", b)
	}
	if len(h.calls) != 2 {
		t.Fatalf("model calls %d, want 2 (the model sees the error and answers)", len(h.calls))
	}
}

// Issue 10: a call of a tool outside tools.enabled becomes an error result
// the model can correct; the loop goes on.
func TestLoop_CallOfADisabledToolBecomesAnErrorResult(t *testing.T) {
	h := newHarness(t)
	in := h.toolInput(`tool:edit {"path":"x.txt"}`, `text:fixed it`)
	in.Tools.Enabled = []string{"read"} // edit is not enabled: an error result too
	res, err := h.run(in)
	if err != nil || res.Text != "fixed it" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	end, _ := findEvent(h.events(), agent.EventToolExecutionEnd)
	if !end.IsError || !strings.Contains(end.ToolResult.Content[0].Text, "not enabled") {
		t.Fatalf("result %+v", end.ToolResult)
	}
}

// Issue 10: an overflow at a later turn compacts and the loop continues
// past the context window (SPEC 9).
func TestLoop_OverflowMidLoopCompactsAndContinues(t *testing.T) {
	h := newCompactHarness(t)
	seedHistory(t, h.store)
	in := h.toolInput(`tool:ls {}`, `overflow`, `text:done after compaction`)
	in.Compaction = compaction.DefaultSettings()
	in.Compaction.KeepRecentTokens = 150
	res, err := h.run(in)
	if err != nil || res.Text != "done after compaction" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	evs := h.events()
	if _, ok := findEvent(evs, agent.EventAutoCompactionStart); !ok {
		t.Fatalf("no compaction: %v", types(evs))
	}
	if got := retryEvents(t, evs); len(got) != 0 {
		t.Fatalf("overflow retried: %v", got)
	}
	if len(compactionEntries(t, h.store)) != 1 || len(h.tools) != 1 {
		t.Fatalf("compactions %d tools %d", len(compactionEntries(t, h.store)), len(h.tools))
	}
}

// Issue 10 (long jobs): at the event limit the prompt continues as new at
// a turn boundary, carrying the leaf, the event sequence and the turn; the
// next run writes no second user message and its events continue the
// sequence without a gap.
func TestLoop_ContinueAsNewCarriesState(t *testing.T) {
	h := newHarness(t)
	script := []string{`tool:ls {}`, `tool:ls {}`, `tool:ls {}`, `text:done`}
	in := h.toolInput(script...)
	in.Agent.ContinueAsNewEvents = 20
	h.env.SetCurrentHistoryLength(25) // as if the first turn had made a long history
	next := h.continued(in)
	first := h.events()
	last := first[len(first)-1]
	c := next.Continued
	if c == nil || c.Seq != last.Seq || c.Turn < 2 || c.LeafID == "" || c.Runs != 1 {
		t.Fatalf("carried %+v (last event %d)", c, last.Seq)
	}

	h2 := newHarness(t)
	h2.store, h2.acts.Sessions = h.store, h.store
	h2.workspace = h.workspace
	res, err := h2.run(next)
	if err != nil || res.Text != "done" {
		t.Fatalf("continued run: %+v %v", res, err)
	}
	evs := h2.events()
	if evs[0].Seq != last.Seq+1 {
		t.Fatalf("continued run starts at seq %d, want %d", evs[0].Seq, last.Seq+1)
	}
	for i, e := range evs {
		if e.Seq != last.Seq+1+int64(i) {
			t.Fatalf("gap at %d: %d", i, e.Seq)
		}
	}
	if h2.calls[0].LeafID != c.LeafID {
		t.Fatalf("continued run calls the model from %s, want %s", h2.calls[0].LeafID, c.LeafID)
	}
	users := 0
	for _, e := range h.branch(res.LeafID) {
		if e.Message != nil && e.Message.Role == agent.RoleUser {
			users++
		}
	}
	if users != 1 {
		t.Fatalf("%d user messages on the branch, want 1", users)
	}
	// Events after a seq of the previous run answer from this run's first.
	v, err := h2.env.QueryWorkflow(agent.QueryEvents, map[string]int64{"afterSeq": 0})
	if err != nil {
		t.Fatal(err)
	}
	var all []agent.Event
	if err := v.Get(&all); err != nil || len(all) != len(evs) {
		t.Fatalf("events {afterSeq:0}: %d events, %v", len(all), err)
	}
}

// continued runs in, which must continue as new, and returns the next
// run's input.
func (h *harness) continued(in PromptInput) PromptInput {
	h.t.Helper()
	h.env.ExecuteWorkflow(PromptWorkflowName, in)
	var can *workflow.ContinueAsNewError
	if err := h.env.GetWorkflowError(); !errors.As(err, &can) {
		h.t.Fatalf("first run ended with %v, want continue-as-new", err)
	}
	var next PromptInput
	if err := decodePayload(can, &next); err != nil {
		h.t.Fatal(err)
	}
	return next
}

func decodePayload(can *workflow.ContinueAsNewError, out *PromptInput) error {
	if can.Input == nil || len(can.Input.Payloads) != 1 {
		return fmt.Errorf("continue-as-new input %+v", can.Input)
	}
	return json.Unmarshal(can.Input.Payloads[0].Data, out)
}

// Issue 10 (entry ids): every entry of a long prompt gets its own id,
// past 999 and 9999; the store would silently drop a repeated one.
func TestEntryIDs_UniqueWithoutLimit(t *testing.T) {
	r := &run{idPrefix: "abcd1234ffff"}
	seen := map[string]bool{}
	for i := 0; i < 25000; i++ {
		id := r.newID()
		if seen[id] {
			t.Fatalf("id %s repeats at %d", id, i+1)
		}
		seen[id] = true
	}
	if got := (&run{idPrefix: "p"}).newID(); got != "p-001" {
		t.Fatalf("first id %s, want p-001", got)
	}
}
