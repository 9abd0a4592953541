package scripted

import (
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/compaction"
	"github.com/durableagent/durableagent/internal/llm"
)

func userMsgs(texts ...string) []agent.Message {
	var out []agent.Message
	for _, t := range texts {
		out = append(out, agent.TextMessage(agent.RoleUser, t))
	}
	return out
}

func TestComplete_ReplaysFaultScriptByAttempt(t *testing.T) {
	script := []string{"503 Service Unavailable", "[529 overloaded_error] Overloaded", "overflow", "ok"}
	tests := []struct {
		attempt    int
		stop       agent.StopReason
		errText    string
		status     int
		errType    string
		wantAnswer string
	}{
		{0, agent.StopReasonError, "503 Service Unavailable", 0, "", ""},
		{1, agent.StopReasonError, "Overloaded", 529, "overloaded_error", ""},
		{2, agent.StopReasonError, OverflowText, 400, "invalid_request_error", ""},
		{3, agent.StopReasonStop, "", 0, "", "done"},
		{4, agent.StopReasonStop, "", 0, "", "done"}, // past the end of the script
	}
	p := New(Options{Reply: "done"})
	for _, tt := range tests {
		m := p.Complete(context.Background(), llm.Request{Messages: userMsgs("hi"), Attempt: tt.attempt, Faults: script})
		if m.StopReason != tt.stop || m.ErrorMessage != tt.errText || m.ErrorStatus != tt.status || m.ErrorType != tt.errType || m.Text() != tt.wantAnswer {
			t.Errorf("attempt %d: %+v", tt.attempt, m)
		}
	}
}

func TestComplete_HangHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := New(Options{}).Complete(ctx, llm.Request{Faults: []string{"hang"}})
	if m.StopReason != agent.StopReasonAborted {
		t.Fatalf("stop reason %q, want aborted", m.StopReason)
	}
	m = New(Options{}).Complete(context.Background(), llm.Request{Messages: userMsgs("q"), Faults: []string{"hang:1ms"}})
	if m.StopReason != agent.StopReasonStop || m.Text() != "Scripted reply to: q" {
		t.Fatalf("after a short hang: %+v", m)
	}
}

func TestParseFault_RejectsBadElements(t *testing.T) {
	for _, s := range []string{"hang:soon", "[503 no closing bracket", "[503]"} {
		if _, err := ParseFault(s); err == nil {
			t.Errorf("ParseFault(%q) = nil error", s)
		}
	}
	if err := ValidateScript([]string{"ok", "overflow", "hang:2s", "[429] slow down"}); err != nil {
		t.Errorf("ValidateScript: %v", err)
	}
}

// A summary request (Purpose or system prompt) gets a deterministic
// summary in the compaction sections, built from the transcript's counts.
func TestComplete_SummaryRequestGetsDeterministicSummary(t *testing.T) {
	items := []compaction.Item{
		{Role: compaction.RoleUser, Text: "fix the bug"},
		{Role: compaction.RoleAssistant, Text: "looking"},
		{Role: compaction.RoleToolResult, ToolName: "bash", Text: "ok"},
		{Role: compaction.RoleUser, Text: "thanks"},
	}
	prompt := compaction.SummaryPrompt(compaction.PromptInput{Items: items})
	p := New(Options{Reply: "not a summary"})
	for _, req := range []llm.Request{
		{Purpose: llm.PurposeSummarize, Messages: userMsgs(prompt)},
	} {
		m := p.Complete(context.Background(), req)
		text := m.Text()
		if m.StopReason != agent.StopReasonStop || !strings.HasPrefix(text, "## Goal\n") ||
			!strings.Contains(text, "Summarised 4 messages (2 user, 1 assistant, 1 tool)") {
			t.Fatalf("summary answer %+v:\n%s", m, text)
		}
		if again := p.Complete(context.Background(), req).Text(); again != text {
			t.Fatal("summary is not deterministic")
		}
	}
	merged := SummaryReply(compaction.SummaryPrompt(compaction.PromptInput{Items: items, PreviousSummary: "old"}))
	if !strings.Contains(merged, "Previous summary merged: yes") {
		t.Errorf("merged summary does not say so:\n%s", merged)
	}
	prefix := SummaryReply(compaction.TurnPrefixPrompt(compaction.PromptInput{Items: items[:2]}))
	if !strings.HasPrefix(prefix, "## Original Request\n") || !strings.Contains(prefix, "Summarised 2 messages") {
		t.Errorf("turn prefix summary:\n%s", prefix)
	}
	// A previous summary that came from a split turn still gets a
	// history summary when merged.
	again := SummaryReply(compaction.SummaryPrompt(compaction.PromptInput{Items: items, PreviousSummary: compaction.JoinSplitTurnSummary(merged, prefix)}))
	if !strings.HasPrefix(again, "## Goal\n") {
		t.Errorf("merging a split-turn summary answered with the wrong sections:\n%s", again)
	}
}

// Summary requests replay their own fault script (the activity passes
// ModelRef.SummaryFaults as Faults), so summaries fail independently.
func TestComplete_SummaryFaultsApplyToSummaryRequests(t *testing.T) {
	p := New(Options{})
	req := llm.Request{Purpose: llm.PurposeSummarize, Messages: userMsgs("x"), Faults: []string{"503 Service Unavailable"}}
	if m := p.Complete(context.Background(), req); m.StopReason != agent.StopReasonError || m.ErrorMessage != "503 Service Unavailable" {
		t.Fatalf("attempt 0: %+v", m)
	}
	req.Attempt = 1
	if m := p.Complete(context.Background(), req); m.StopReason != agent.StopReasonStop || !strings.HasPrefix(m.Text(), "## Goal") {
		t.Fatalf("attempt 1: %+v", m)
	}
}

func TestComplete_LatencyHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if m := New(Options{Latency: time.Hour}).Complete(ctx, llm.Request{}); m.StopReason != agent.StopReasonAborted {
		t.Fatalf("stop reason %q, want aborted", m.StopReason)
	}
}

// recorder collects the deltas of a call.
type recorder struct{ deltas []llm.Delta }

func (r *recorder) add(d llm.Delta) { r.deltas = append(r.deltas, d) }

// checkDeltas asserts the deltas join, per block, to the final text or
// tool-call arguments, with matching types, the tool call named on every
// piece.
func checkDeltas(t *testing.T, r *recorder, m agent.Message) {
	t.Helper()
	joined := map[int]string{}
	for _, d := range r.deltas {
		if d.ContentIndex < 0 || d.ContentIndex >= len(m.Content) {
			t.Fatalf("delta %+v names block %d of %d", d, d.ContentIndex, len(m.Content))
		}
		b := m.Content[d.ContentIndex]
		switch {
		case b.Type == "text" && d.Type == agent.DeltaText:
		case b.Type == "toolCall" && d.Type == agent.DeltaToolCall:
			if d.ToolCallID != b.ToolCall.ID || d.ToolName != b.ToolCall.Name {
				t.Fatalf("tool-call delta %+v, want id %q name %q", d, b.ToolCall.ID, b.ToolCall.Name)
			}
		default:
			t.Fatalf("delta %+v for a %s block", d, b.Type)
		}
		joined[d.ContentIndex] += d.Delta
	}
	for i, b := range m.Content {
		want := b.Text
		if b.ToolCall != nil {
			want = string(b.ToolCall.Arguments)
		}
		if joined[i] != want {
			t.Fatalf("deltas of block %d join to %q, want %q", i, joined[i], want)
		}
	}
}

func TestComplete_ToolElement(t *testing.T) {
	script := []string{"503 Service Unavailable", `tool:bash {"command":"go test ./..."}`, "tool:ls"}
	p := New(Options{Reply: "done"})
	var rec recorder
	m := p.Complete(context.Background(), llm.Request{Messages: userMsgs("test it"), Attempt: 1, Faults: script, OnDelta: rec.add})
	want := []agent.ContentBlock{
		{Type: "text", Text: "Running bash."},
		{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "call_1_0", Name: "bash", Arguments: json.RawMessage(`{"command":"go test ./..."}`)}},
	}
	if m.StopReason != agent.StopReasonToolUse || !reflect.DeepEqual(m.Content, want) {
		t.Fatalf("message = %+v", m)
	}
	if m.Usage == nil || m.Usage.Input == 0 || m.Usage.Output == 0 {
		t.Fatalf("usage = %+v, want an estimate", m.Usage)
	}
	checkDeltas(t, &rec, m)
	var argPieces int
	for _, d := range rec.deltas {
		if d.Type == agent.DeltaToolCall {
			argPieces++
		}
	}
	if argPieces < 2 || argPieces > 3 {
		t.Fatalf("arguments streamed in %d pieces, want 2 or 3", argPieces)
	}
	// Same attempt, same answer (deterministic ids).
	if again := p.Complete(context.Background(), llm.Request{Messages: userMsgs("test it"), Attempt: 1, Faults: script}); !reflect.DeepEqual(again.Content, m.Content) {
		t.Fatalf("replay differs: %+v", again)
	}
	// No ARGS: {}.
	m = p.Complete(context.Background(), llm.Request{Messages: userMsgs("x"), Attempt: 2, Faults: script})
	if calls := m.ToolCalls(); m.StopReason != agent.StopReasonToolUse || len(calls) != 1 || calls[0].ID != "call_2_0" || calls[0].Name != "ls" || string(calls[0].Arguments) != "{}" {
		t.Fatalf("tool:ls = %+v", m)
	}
	// Past the end of the script: the normal answer.
	if m = p.Complete(context.Background(), llm.Request{Messages: userMsgs("x"), Attempt: 3, Faults: script}); m.StopReason != agent.StopReasonStop || m.Text() != "done" {
		t.Fatalf("past the script = %+v", m)
	}
}

func TestComplete_ToolsElement(t *testing.T) {
	script := []string{`tools:[{"name":"read","arguments":{"path":"a.txt"}},{"name":"ls","arguments":{}},{"name":"grep"}]`}
	var rec recorder
	m := New(Options{}).Complete(context.Background(), llm.Request{Messages: userMsgs("look"), Faults: script, OnDelta: rec.add})
	want := []agent.ContentBlock{
		{Type: "text", Text: "Running read, ls, grep."},
		{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "call_0_0", Name: "read", Arguments: json.RawMessage(`{"path":"a.txt"}`)}},
		{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "call_0_1", Name: "ls", Arguments: json.RawMessage(`{}`)}},
		{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "call_0_2", Name: "grep", Arguments: json.RawMessage(`{}`)}},
	}
	if m.StopReason != agent.StopReasonToolUse || !reflect.DeepEqual(m.Content, want) {
		t.Fatalf("message = %+v", m)
	}
	checkDeltas(t, &rec, m)
}

func TestComplete_TextElement(t *testing.T) {
	var rec recorder
	m := New(Options{Reply: "not this"}).Complete(context.Background(),
		llm.Request{Messages: userMsgs("q"), Faults: []string{"text:  All tests pass.\nNothing else to do. "}, OnDelta: rec.add})
	if m.StopReason != agent.StopReasonStop || m.Text() != "All tests pass.\nNothing else to do." || len(m.ToolCalls()) != 0 {
		t.Fatalf("message = %+v", m)
	}
	checkDeltas(t, &rec, m)
	want := []string{"All", " tests", " pass.", "\nNothing", " else", " to", " do."}
	var got []string
	for _, d := range rec.deltas {
		got = append(got, d.Delta)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("deltas = %q, want word by word %q", got, want)
	}
}

// Every answer streams: the default reply and a summary too.
func TestComplete_DeltasJoinToTheAnswer(t *testing.T) {
	for _, req := range []llm.Request{
		{Messages: userMsgs("hello there")},
		{Purpose: llm.PurposeSummarize, Messages: userMsgs("summarise")},
		{Messages: userMsgs("x"), Faults: []string{"hang:1ms"}},
	} {
		var rec recorder
		req.OnDelta = rec.add
		m := New(Options{StreamDelay: time.Microsecond}).Complete(context.Background(), req)
		if m.StopReason != agent.StopReasonStop || len(rec.deltas) < 2 {
			t.Fatalf("message = %+v, %d deltas", m, len(rec.deltas))
		}
		checkDeltas(t, &rec, m)
	}
	// Errors stream nothing.
	var rec recorder
	m := New(Options{}).Complete(context.Background(), llm.Request{Faults: []string{"overflow"}, OnDelta: rec.add})
	if m.StopReason != agent.StopReasonError || len(rec.deltas) != 0 {
		t.Fatalf("error answer %+v streamed %d deltas", m, len(rec.deltas))
	}
}

func TestComplete_StreamDelayPausesBetweenPieces(t *testing.T) {
	const delay = 20 * time.Millisecond
	var rec recorder
	start := time.Now()
	m := New(Options{Reply: "one two three four", StreamDelay: delay}).Complete(context.Background(), llm.Request{OnDelta: rec.add})
	if m.Text() != "one two three four" || len(rec.deltas) != 4 {
		t.Fatalf("message = %+v, deltas %+v", m, rec.deltas)
	}
	if took := time.Since(start); took < 3*delay {
		t.Fatalf("answer took %v, want at least 3 pauses of %v", took, delay)
	}
}

// Cancelling mid-stream aborts the answer.
func TestComplete_CancelMidStream(t *testing.T) {
	for _, delay := range []time.Duration{0, time.Hour} {
		ctx, cancel := context.WithCancel(context.Background())
		var rec recorder
		onDelta := func(d llm.Delta) {
			rec.add(d)
			if len(rec.deltas) == 2 {
				cancel()
			}
		}
		done := make(chan agent.Message, 1)
		go func() {
			done <- New(Options{StreamDelay: delay}).Complete(ctx, llm.Request{Messages: userMsgs("a b c d e"),
				Faults: []string{`tool:bash {"command":"echo a b c"}`}, OnDelta: onDelta})
		}()
		if delay > 0 {
			// The first pause is an hour: cancel while the stream waits.
			time.AfterFunc(20*time.Millisecond, cancel)
		}
		select {
		case m := <-done:
			if m.StopReason != agent.StopReasonAborted {
				t.Fatalf("delay %v: message = %+v, want aborted", delay, m)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("delay %v: cancel did not stop the stream", delay)
		}
		if delay == 0 && len(rec.deltas) != 2 {
			t.Fatalf("delay 0: %d deltas after cancelling at the second", len(rec.deltas))
		}
		if delay > 0 && len(rec.deltas) != 1 {
			t.Fatalf("delay %v: %d deltas, want the first only", delay, len(rec.deltas))
		}
		cancel()
	}
}

func TestParseFault_ToolAndTextElements(t *testing.T) {
	good := map[string]Fault{
		`tool:bash {"command":"go test ./..."}`: {Kind: "tool", ToolCalls: []ToolCall{{Name: "bash", Arguments: json.RawMessage(`{"command":"go test ./..."}`)}}},
		`TOOL: read { "path" : "a.txt" }`:       {Kind: "tool", ToolCalls: []ToolCall{{Name: "read", Arguments: json.RawMessage(`{"path":"a.txt"}`)}}},
		`tool:read{"path":"a"}`:                 {Kind: "tool", ToolCalls: []ToolCall{{Name: "read", Arguments: json.RawMessage(`{"path":"a"}`)}}},
		"tool:ls":                               {Kind: "tool", ToolCalls: []ToolCall{{Name: "ls", Arguments: json.RawMessage(`{}`)}}},
		`tools:[{"name":"read","arguments":{"path":"a.txt"}},{"name":"ls","arguments":{}}]`: {Kind: "tool", ToolCalls: []ToolCall{
			{Name: "read", Arguments: json.RawMessage(`{"path":"a.txt"}`)}, {Name: "ls", Arguments: json.RawMessage(`{}`)}}},
		`tools: [{"name":"ls","arguments":null}]`: {Kind: "tool", ToolCalls: []ToolCall{{Name: "ls", Arguments: json.RawMessage(`{}`)}}},
		"text:All done.":                  {Kind: "text", Text: "All done."},
		"Text: spaced ":                   {Kind: "text", Text: "spaced"},
		"toolbox exploded":                {Kind: "error", Text: "toolbox exploded"}, // not a tool element
		`badtool:edit {"path": "a.txt", `: {Kind: "tool", ToolCalls: []ToolCall{{Name: "edit", Arguments: json.RawMessage(`"{\"path\": \"a.txt\","`)}}},
	}
	for s, want := range good {
		got, err := ParseFault(s)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseFault(%q) = %+v, %v; want %+v", s, got, err, want)
		}
	}
	bad := []string{
		"badtool:",
		`badtool:edit {"path":"a.txt"}`,
		"badtool:ba$h x",
		"tool:",
		`tool: {"command":"ls"}`,
		`tool:bash {"command":`,
		`tool:bash ["ls"]`,
		`tool:bash "ls"`,
		`tool:bash {"a":1} trailing`,
		"tool:ba$h",
		"tools:",
		"tools:[]",
		`tools:{"name":"ls"}`,
		`tools:[{"name":"ls","arguments":[1]}]`,
		`tools:[{"arguments":{}}]`,
		`tools:[{"name":"ls","args":{}}]`,
		`tools:["ls"]`,
		`tools:[{"name":"ls"}] extra`,
		"text:",
		"text:   ",
	}
	for _, s := range bad {
		_, err := ParseFault(s)
		if err == nil {
			t.Errorf("ParseFault(%q) = nil error", s)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.Contains(msg, strconv.Quote(strings.TrimSpace(s))) {
			t.Errorf("ParseFault(%q) error %q: want one line naming the element", s, msg)
		}
		if err := ValidateScript([]string{"ok", s}); err == nil || err.Error() != msg {
			t.Errorf("ValidateScript with %q = %v, want %q", s, err, msg)
		}
	}
	// A bad element reached by a call is an error answer, not a crash.
	m := New(Options{}).Complete(context.Background(), llm.Request{Faults: []string{"tool:"}})
	if m.StopReason != agent.StopReasonError || !strings.Contains(m.ErrorMessage, `"tool:"`) {
		t.Fatalf("bad element answered %+v", m)
	}
}
