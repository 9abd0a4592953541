package openai

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/retry"
)

// Reasoning that came as "reasoning" (OpenRouter, Groq, Ollama) is shown
// as thinking but not sent back as reasoning_content (Groq rejects unknown
// message fields); reasoning_content is sent back only with tool calls.
func TestMessages_ReasoningContentOnlyWhereItCame(t *testing.T) {
	groq := agent.Message{Role: agent.RoleAssistant, Content: []agent.ContentBlock{
		{Type: "thinking", Text: "think", Signature: "reasoning"},
		{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "c1", Name: "ls", Arguments: json.RawMessage(`{}`)}},
	}}
	deepseekNoTools := agent.Message{Role: agent.RoleAssistant, Content: []agent.ContentBlock{
		{Type: "thinking", Text: "think", Signature: FieldReasoningContent},
		{Type: "text", Text: "done"},
	}}
	got, err := json.Marshal(messages("", []agent.Message{groq, deepseekNoTools}))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"ls","arguments":"{}"}}]},` +
		`{"role":"assistant","content":"done"}]`
	if !jsonEqual(t, got, want) {
		t.Fatalf("sent %s\nwant %s", got, want)
	}
}

// OpenRouter's reasoning_details pieces (split over chunks, keyed by
// index, a signature at the end) are merged, kept on the message and sent
// back with it; the reasoning text is the thinking block.
func TestComplete_ReasoningDetailsKeptAndSentBack(t *testing.T) {
	detail := func(text, sig string) []any {
		d := map[string]any{"type": "reasoning.text", "text": text, "format": "anthropic-claude-v1", "index": 0}
		if sig != "" {
			d["signature"] = sig
		}
		return []any{d}
	}
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		stream(w,
			": OPENROUTER PROCESSING\n\n",
			chunk(map[string]any{"role": "assistant", "content": "", "reasoning": nil, "reasoning_details": []any{}}, nil),
			chunk(map[string]any{"content": "", "reasoning": "Two plus ", "reasoning_details": detail("Two plus ", "")}, nil),
			chunk(map[string]any{"content": "", "reasoning": "two.", "reasoning_details": detail("two.", "")}, nil),
			chunk(map[string]any{"content": "", "reasoning": nil, "reasoning_details": detail("", "SIG==")}, nil),
			toolStart(0, "call_1", "ls"), toolArgs(0, `{}`),
			finish("tool_calls"), chunkDone)
	})
	m := call(t, s, request())
	if m.StopReason != agent.StopReasonToolUse {
		t.Fatalf("message = %+v", m)
	}
	if m.Content[0].Type != "thinking" || m.Content[0].Text != "Two plus two." {
		t.Fatalf("thinking = %+v", m.Content[0])
	}
	wantDetails := `[{"type":"reasoning.text","text":"Two plus two.","signature":"SIG==","format":"anthropic-claude-v1","index":0}]`
	if !jsonEqual(t, m.ReasoningDetails, wantDetails) {
		t.Fatalf("reasoning details = %s\nwant %s", m.ReasoningDetails, wantDetails)
	}
	// Through the session file and back out.
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var stored agent.Message
	if err := json.Unmarshal(raw, &stored); err != nil {
		t.Fatal(err)
	}
	next, err := json.Marshal(messages("", []agent.Message{stored}))
	if err != nil {
		t.Fatal(err)
	}
	var sent []map[string]json.RawMessage
	if err := json.Unmarshal(next, &sent); err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, sent[0]["reasoning_details"], wantDetails) {
		t.Fatalf("sent back %s", next)
	}
	if _, ok := sent[0]["reasoning_content"]; ok {
		t.Fatalf("OpenRouter reasoning sent back as reasoning_content: %s", next)
	}
}

// Magistral's content arrives as typed parts: thinking parts become the
// thinking block, text parts the text, never the array's JSON text.
func TestComplete_ContentAsTypedParts(t *testing.T) {
	thinking := func(s string) map[string]any {
		return map[string]any{"type": "thinking", "thinking": []any{map[string]any{"type": "text", "text": s}}}
	}
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		stream(w,
			chunk(map[string]any{"role": "assistant", "content": []any{thinking("The user asks")}}, nil),
			chunk(map[string]any{"content": []any{thinking(" for 2+2.")}}, nil),
			chunk(map[string]any{"content": []any{map[string]any{"type": "text", "text": "2 + 2 = 4"}}}, nil),
			chunk(map[string]any{"content": ""}, "stop"), chunkUse, chunkDone)
	})
	var rec recorder
	req := request()
	req.OnDelta = rec.add
	m := call(t, s, req)
	want := []agent.ContentBlock{{Type: "thinking", Text: "The user asks for 2+2."}, {Type: "text", Text: "2 + 2 = 4"}}
	if m.StopReason != agent.StopReasonStop || !reflect.DeepEqual(m.Content, want) {
		got, _ := json.Marshal(m)
		t.Fatalf("message = %s", got)
	}
	checkDeltas(t, &rec, m)
}

// finish_reason "length" followed by an error chunk (OpenRouter's "Token
// limit reached") is a length stop keeping the streamed text, not a
// failed call.
func TestComplete_LengthThenErrorChunkIsALengthStop(t *testing.T) {
	const errChunk = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","error":{"code":400,"message":"Token limit reached"},` +
		`"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],` +
		`"usage":{"prompt_tokens":43,"completion_tokens":10,"total_tokens":53,"prompt_tokens_details":{"cached_tokens":0}}}` + "\n\n"
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		stream(w,
			chunk(map[string]any{"role": "assistant", "reasoning": "We need"}, nil),
			chunk(map[string]any{"content": "Hello th"}, "length"),
			errChunk, chunkDone)
	})
	m := call(t, s, request())
	if m.StopReason != agent.StopReasonLength || m.Text() != "Hello th" || m.ErrorMessage != "" {
		got, _ := json.Marshal(m)
		t.Fatalf("message = %s, want a length stop with the text", got)
	}
	if m.Usage == nil || *m.Usage != (agent.Usage{}) {
		t.Fatalf("usage = %+v, want only what came before the error chunk", m.Usage)
	}
	// An error chunk without a length finish is still a failure.
	s2 := newServer(t, func(w http.ResponseWriter, r *http.Request) { stream(w, chunkHel, errChunk) })
	if m := call(t, s2, request()); m.StopReason != agent.StopReasonError {
		t.Fatalf("error chunk mid-answer = %+v, want error", m)
	}
}

// Groq's in-stream tool_use_failed (the model's tool call failed the
// schema check) is an error the retry loop retries: a new sample usually
// passes. Other in-stream errors keep their own verdict.
func TestComplete_GroqToolUseFailedIsRetried(t *testing.T) {
	const failed = "event: error\ndata: {\"error\":{\"message\":\"Tool call validation failed: parameters for tool ls did not match schema\"," +
		"\"type\":\"invalid_request_error\",\"code\":\"tool_use_failed\",\"failed_generation\":\"{}\",\"status_code\":400}}\n\n"
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		stream(w, chunk(map[string]any{"role": "assistant", "reasoning": "call ls"}, nil), failed)
	})
	m := call(t, s, request())
	if m.StopReason != agent.StopReasonError || m.ErrorType != ErrorTypeToolUseFailed {
		t.Fatalf("message = %+v", m)
	}
	if m.ShouldRetry == nil || !*m.ShouldRetry {
		t.Fatalf("shouldRetry = %v, want true", m.ShouldRetry)
	}
	if c := classify(m); c.Class != retry.ClassRetryable {
		t.Fatalf("classified %+v, want retryable", c)
	}
	if len(m.Content) > 0 && m.Content[0].Type == "toolCall" {
		t.Fatalf("a failed answer kept a tool call: %+v", m.Content)
	}
}
