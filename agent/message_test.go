package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// The content blocks and messages marshal to the terminal agent's shapes
// (@mariozechner/pi-coding-agent docs/session-format.md) and read back
// unchanged.
func TestMessage_JSONShapes(t *testing.T) {
	exit0 := 0
	for _, tc := range []struct {
		name string
		msg  Message
		want string
	}{
		{"assistant with thinking, text and a tool call", Message{Role: RoleAssistant, API: "anthropic-messages", Provider: "anthropic", Model: "m",
			Content: []ContentBlock{
				{Type: BlockThinking, Text: "hmm", Signature: "sig"},
				{Type: BlockText, Text: "hi"},
				{Type: BlockToolCall, ToolCall: &ToolCall{ID: "c1", Name: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)}},
			},
			Usage:      &Usage{Input: 10, Output: 5, TotalTokens: 15, Cost: UsageCost{Input: 0.1, Total: 0.1}},
			StopReason: StopReasonToolUse, Timestamp: 7},
			`{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","thinkingSignature":"sig"},{"type":"text","text":"hi"},` +
				`{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"ls"}}],"api":"anthropic-messages","provider":"anthropic","model":"m",` +
				`"stopReason":"toolUse","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0.1,"output":0,"cacheRead":0,"cacheWrite":0,"total":0.1}},"timestamp":7}`},
		{"tool call without arguments", Message{Role: RoleAssistant, Content: []ContentBlock{{Type: BlockToolCall, ToolCall: &ToolCall{ID: "c", Name: "ls"}}}},
			`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"ls","arguments":{}}]}`},
		{"user with an image", Message{Role: RoleUser, Content: []ContentBlock{{Type: BlockText, Text: "look"}, {Type: BlockImage, Data: "aGk=", MimeType: "image/png"}}, Timestamp: 1},
			`{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","data":"aGk=","mimeType":"image/png"}],"timestamp":1}`},
		{"tool result that is not an error", Message{Role: RoleToolResult, ToolCallID: "c", ToolName: "ls", Content: []ContentBlock{{Type: BlockText, Text: "a"}}},
			`{"role":"toolResult","content":[{"type":"text","text":"a"}],"toolCallId":"c","toolName":"ls","isError":false}`},
		{"failed answer without content", Message{Role: RoleAssistant, StopReason: StopReasonError, ErrorMessage: "503"},
			`{"role":"assistant","stopReason":"error","errorMessage":"503","content":[]}`},
		{"bash execution", Message{Role: RoleBashExecution, Command: "true", ExitCode: &exit0, Timestamp: 2},
			`{"role":"bashExecution","command":"true","exitCode":0,"timestamp":2,"output":"","cancelled":false,"truncated":false}`},
		{"compaction summary", Message{Role: RoleSummary, Content: []ContentBlock{{Type: BlockText, Text: "s"}}, TokensBefore: 9},
			`{"role":"compactionSummary","content":[{"type":"text","text":"s"}],"summary":"s","tokensBefore":9}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.msg)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Fatalf("got  %s\nwant %s", b, tc.want)
			}
			var back Message
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if b2, _ := json.Marshal(back); string(b2) != tc.want {
				t.Fatalf("round trip changed the message: %s", b2)
			}
		})
	}
}

// Messages written by earlier versions (a tool call nested under
// "toolCall", thinking under "text") still read, and are written back in
// the flat shapes: old session files and workflow histories keep loading.
func TestMessage_ReadsEarlierShapes(t *testing.T) {
	old := `{"role":"assistant","content":[{"type":"thinking","text":"plan"},{"type":"text","text":"ok"},` +
		`{"type":"toolCall","toolCall":{"id":"c1","name":"read","arguments":{"path":"a"}}},{"type":"toolCall","toolCall":{"id":"c2","name":"ls"}}],"stopReason":"toolUse"}`
	var m Message
	if err := json.Unmarshal([]byte(old), &m); err != nil {
		t.Fatal(err)
	}
	calls := m.ToolCalls()
	if len(calls) != 2 || calls[0].ID != "c1" || calls[0].Name != "read" || string(calls[0].Arguments) != `{"path":"a"}` || calls[1].Name != "ls" {
		t.Fatalf("tool calls = %+v", calls)
	}
	if m.Content[0].Type != BlockThinking || m.Content[0].Text != "plan" || m.Text() != "ok" {
		t.Fatalf("content = %+v", m.Content)
	}
	b, _ := json.Marshal(m)
	want := `{"role":"assistant","content":[{"type":"thinking","thinking":"plan"},{"type":"text","text":"ok"},` +
		`{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}},{"type":"toolCall","id":"c2","name":"ls","arguments":{}}],"stopReason":"toolUse"}`
	if string(b) != want {
		t.Fatalf("rewritten as %s\nwant %s", b, want)
	}
}

// A tool call whose stored arguments are not JSON cannot be written: the
// store refuses the entry instead of writing a line nobody can read.
func TestContentBlock_InvalidArgumentsFailToMarshal(t *testing.T) {
	b := ContentBlock{Type: BlockToolCall, ToolCall: &ToolCall{ID: "c", Name: "x", Arguments: json.RawMessage(`{"a":`)}}
	if _, err := json.Marshal(b); err == nil {
		t.Fatal("invalid arguments marshalled")
	}
}

// Usage.Priced: cost per kind of token from the per-million prices, and
// the total; zero prices give zero cost.
func TestUsage_Priced(t *testing.T) {
	u := Usage{Input: 1000, Output: 500, CacheRead: 2000, CacheWrite: 100}.Priced(ModelCost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75})
	if u.TotalTokens != 3600 {
		t.Fatalf("totalTokens = %d", u.TotalTokens)
	}
	want := UsageCost{Input: 0.003, Output: 0.0075, CacheRead: 0.0006, CacheWrite: 0.000375, Total: 0.011475}
	if u.Cost != want {
		t.Fatalf("cost = %+v, want %+v", u.Cost, want)
	}
	if z := (Usage{Input: 5}).Priced(ModelCost{}); z.Cost != (UsageCost{}) || z.TotalTokens != 5 {
		t.Fatalf("unknown prices: %+v", z)
	}
}

// agent_end carries the run's messages when RPC mode filled them (the
// terminal agent's shape, plus our willRetry), and leaves the field out
// when nobody did (the workflow's own events).
func TestEvent_AgentEndMessages(t *testing.T) {
	e := Event{Type: EventAgentEnd, Seq: 3, Messages: []Message{TextMessage(RoleUser, "hi")}, StopReason: StopReasonStop}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"agent_end","seq":3,"time":"0001-01-01T00:00:00Z","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],"willRetry":false,"stopReason":"stop"}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil || len(back.Messages) != 1 || back.Messages[0].Text() != "hi" {
		t.Fatalf("read back %+v, %v", back, err)
	}
	e.Messages = []Message{}
	if b, _ := json.Marshal(e); !json.Valid(b) || string(b) != `{"type":"agent_end","seq":3,"time":"0001-01-01T00:00:00Z","messages":[],"willRetry":false,"stopReason":"stop"}` {
		t.Fatalf("empty run: %s", b)
	}
	e.Messages = nil
	if b, _ := json.Marshal(e); string(b) != `{"type":"agent_end","seq":3,"time":"0001-01-01T00:00:00Z","willRetry":false,"stopReason":"stop"}` {
		t.Fatalf("workflow event: %s", b)
	}
}

// Code in messages stays readable where it is written with HTML escaping
// off (session files): the shapes add no \u003c escapes of their own.
func TestMessage_NoHTMLEscaping(t *testing.T) {
	m := Message{Role: RoleAssistant, Content: []ContentBlock{{Type: BlockText, Text: "a < b && c > d"},
		{Type: BlockToolCall, ToolCall: &ToolCall{ID: "c", Name: "bash", Arguments: json.RawMessage(`{"command":"x<y"}`)}}}}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); !strings.Contains(got, `"a < b && c > d"`) || !strings.Contains(got, `"x<y"`) {
		t.Fatalf("escaped: %s", got)
	}
}
