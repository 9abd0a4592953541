package rpcserver

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
)

// The completer replaces the workflow's views with the session's whole
// messages (a tool call's full arguments, the whole tool output, the
// answer's api and usage) and gives agent_end the run's messages.
func TestCompleter_EventsCarryWholeMessages(t *testing.T) {
	at := time.UnixMilli(1_700_000_000_000).UTC()
	user := agent.TextMessage(agent.RoleUser, "list")
	long := `{"command":"ls -la /a/very/long/path"}`
	answer := agent.Message{Role: agent.RoleAssistant, Provider: "anthropic", Model: "m", StopReason: agent.StopReasonToolUse,
		Content:   []agent.ContentBlock{{Type: agent.BlockThinking, Text: "plan"}, {Type: agent.BlockToolCall, ToolCall: &agent.ToolCall{ID: "c1", Name: "bash", Arguments: json.RawMessage(long)}}},
		Usage:     &agent.Usage{Input: 5, Output: 7, TotalTokens: 12},
		Timestamp: 9}
	result := agent.Message{Role: agent.RoleToolResult, ToolCallID: "c1", ToolName: "bash", Content: []agent.ContentBlock{{Type: agent.BlockText, Text: "the whole output"}}}
	sess := &session.Session{Entries: []session.Entry{
		{Type: session.TypeMessage, ID: "u", Timestamp: at, Message: &user},
		{Type: session.TypeMessage, ID: "a", ParentID: "u", Timestamp: at, Message: &answer},
		{Type: session.TypeMessage, ID: "r", ParentID: "a", Timestamp: at, Message: &result},
	}}
	loads := 0
	c := newCompleter(context.Background(), func(context.Context) (*session.Session, error) { loads++; return sess, nil })
	view := func(m agent.Message) *agent.Message { return &m }
	preview := agent.Message{Role: agent.RoleToolResult, ToolCallID: "c1", ToolName: "bash", Content: []agent.ContentBlock{{Type: agent.BlockText, Text: "the who…"}}}

	c.complete(agent.Event{Type: agent.EventAgentStart})
	if e := c.complete(agent.Event{Type: agent.EventMessageEnd, EntryID: "u", Message: view(agent.TextMessage(agent.RoleUser, "list"))}); e.Message.Timestamp != at.UnixMilli() {
		t.Errorf("user message_end = %+v, want the entry's timestamp", e.Message)
	}
	start := c.complete(agent.Event{Type: agent.EventMessageStart, EntryID: "a", Message: &agent.Message{Role: agent.RoleAssistant, Provider: "anthropic", Model: "m"}})
	if start.Message.API != "anthropic-messages" || start.Message.Usage == nil {
		t.Errorf("assistant message_start = %+v", start.Message)
	}
	end := c.complete(agent.Event{Type: agent.EventMessageEnd, EntryID: "a", Message: view(agent.Message{Role: agent.RoleAssistant,
		Content: []agent.ContentBlock{{Type: agent.BlockToolCall, ToolCall: &agent.ToolCall{ID: "c1", Name: "bash", Arguments: json.RawMessage(`{"command":"ls -la /a/v…"}`)}}}})})
	if string(end.Message.ToolCalls()[0].Arguments) != long || end.Message.Content[0].Text != "plan" || end.Message.API != "anthropic-messages" || end.Message.Usage.TotalTokens != 12 {
		t.Errorf("assistant message_end = %+v", end.Message)
	}
	tend := c.complete(agent.Event{Type: agent.EventToolExecutionEnd, EntryID: "r", ToolCallID: "c1", ToolName: "bash", ToolResult: &agent.ToolResult{Content: preview.Content}})
	if tend.ToolResult.Content[0].Text != "the whole output" {
		t.Errorf("tool_execution_end result = %+v", tend.ToolResult)
	}
	c.complete(agent.Event{Type: agent.EventMessageEnd, EntryID: "r", Message: view(preview)})
	turn := c.complete(agent.Event{Type: agent.EventTurnEnd, EntryID: "a", Message: view(agent.Message{Role: agent.RoleAssistant}), ToolResults: []agent.Message{preview}})
	if len(turn.Message.Content) != 2 || len(turn.ToolResults) != 1 || turn.ToolResults[0].Text() != "the whole output" {
		t.Errorf("turn_end = %+v", turn)
	}
	ae := c.complete(agent.Event{Type: agent.EventAgentEnd})
	if len(ae.Messages) != 3 || ae.Messages[0].Text() != "list" || len(ae.Messages[1].ToolCalls()) != 1 || ae.Messages[2].Text() != "the whole output" {
		t.Errorf("agent_end messages = %+v", ae.Messages)
	}
	if loads != 1 {
		t.Errorf("session read %d times, want once (every entry was there)", loads)
	}
}

// Without a session to read, the views stay (normalised).
func TestCompleter_WithoutSessionKeepsViews(t *testing.T) {
	c := newCompleter(context.Background(), func(context.Context) (*session.Session, error) { return nil, nil })
	v := agent.Message{Role: agent.RoleAssistant, Provider: "openai", StopReason: agent.StopReasonStop, Content: []agent.ContentBlock{{Type: agent.BlockText, Text: "hi"}}}
	c.complete(agent.Event{Type: agent.EventAgentStart})
	e := c.complete(agent.Event{Type: agent.EventMessageEnd, EntryID: "x", Message: &v})
	if e.Message.Text() != "hi" || e.Message.API != "openai-completions" || e.Message.Usage == nil {
		t.Errorf("message_end = %+v", e.Message)
	}
	if ae := c.complete(agent.Event{Type: agent.EventAgentEnd}); len(ae.Messages) != 1 {
		t.Errorf("agent_end = %+v", ae)
	}
}

// pi 1.6: tool_execution_end has durationMs, the time since the call's
// tool_execution_start (event times).
func TestPiLines_ToolEndHasDurationMs(t *testing.T) {
	at := time.Date(2026, 12, 4, 7, 0, 0, 0, time.UTC)
	tt := &piLines{started: map[string]time.Time{}}
	tt.line(agent.Event{Type: agent.EventToolExecutionStart, Time: at, ToolCallID: "c1", ToolName: "bash", Args: []byte(`{}`)})
	end := tt.line(agent.Event{Type: agent.EventToolExecutionEnd, Time: at.Add(1234 * time.Millisecond), ToolCallID: "c1", ToolName: "bash",
		ToolResult: &agent.ToolResult{Content: []agent.ContentBlock{{Type: "text", Text: "ok"}}}})
	b, err := json.Marshal(end)
	var got struct {
		Type       string `json:"type"`
		ToolCallID string `json:"toolCallId"`
		DurationMs *int64 `json:"durationMs"`
	}
	if err == nil {
		err = json.Unmarshal(b, &got)
	}
	if err != nil || got.Type != agent.EventToolExecutionEnd || got.ToolCallID != "c1" || got.DurationMs == nil || *got.DurationMs != 1234 {
		t.Errorf("tool_execution_end = %s, %v", b, err)
	}
}

// pi's names for a prompt's compaction: compaction_start {reason} and
// compaction_end with the same reason.
func TestPiLines_CompactionNamesAndReason(t *testing.T) {
	n := &piLines{started: map[string]time.Time{}}
	decode := func(v any) agent.Event {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var e agent.Event
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	s := n.line(agent.Event{Type: agent.EventAutoCompactionStart, Reason: "overflow"})
	e := n.line(agent.Event{Type: agent.EventAutoCompactionEnd, WillRetry: true, Result: &agent.CompactionResult{Summary: "s", TokensBefore: 9}})
	if start := decode(s); start.Type != "compaction_start" || start.Reason != "overflow" {
		t.Errorf("start = %+v", start)
	}
	if end := decode(e); end.Type != "compaction_end" || end.Reason != "overflow" || !end.WillRetry || end.Result == nil || end.Result.Summary != "s" {
		t.Errorf("end = %+v", end)
	}
	if _, asIs := n.line(agent.Event{Type: agent.EventAgentStart}).(agent.Event); !asIs {
		t.Error("agent_start renamed")
	}
}
