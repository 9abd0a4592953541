package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/llm/anthropic"
	"github.com/durableagent/durableagent/internal/llm/openai"
	"github.com/durableagent/durableagent/retry"
)

// part is one piece of an answer as the server streams it.
type part struct {
	kind string // "thinking", "text", "tool"
	text string // text, or a tool call's argument JSON
	id   string
	name string
}

// shape is a response the server sends: parts streamed in order (each
// text piece split in chunks), then how the stream ends.
type shape struct {
	name  string
	parts []part
	// stop: "stop", "length", "tool", "" (the stream is cut before the
	// end: a clean close), "reset" (cut by a TCP reset), "error" (an error
	// event inside the 200 stream).
	stop string
}

// want is what the provider must make of a shape.
type want struct {
	stop    agent.StopReason
	content []agent.ContentBlock // thinking signatures are not compared
	errType string               // for an in-stream error
}

// wire writes shapes in one provider's format.
type wire struct {
	name     string
	path     string
	encode   func(s shape) []string
	provider func(baseURL string) llm.Provider
}

const toolArgs = `{"path":"a \"quoted\" name.go","limit":40}`

var shapes = []struct {
	shape
	want want
}{
	{shape{"text", []part{{kind: "text", text: "Hello world"}}, "stop"},
		want{agent.StopReasonStop, []agent.ContentBlock{{Type: "text", Text: "Hello world"}}, ""}},
	{shape{"thinking then text", []part{{kind: "thinking", text: "The user greets."}, {kind: "text", text: "Hi."}}, "stop"},
		want{agent.StopReasonStop, []agent.ContentBlock{{Type: "thinking", Text: "The user greets."}, {Type: "text", Text: "Hi."}}, ""}},
	{shape{"text then tool call", []part{{kind: "text", text: "Let me read."}, {kind: "tool", id: "call_1", name: "read", text: toolArgs}}, "tool"},
		want{agent.StopReasonToolUse, []agent.ContentBlock{{Type: "text", Text: "Let me read."},
			{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "call_1", Name: "read", Arguments: json.RawMessage(toolArgs)}}}, ""}},
	{shape{"length stop", []part{{kind: "text", text: "A long ans"}}, "length"},
		want{agent.StopReasonLength, []agent.ContentBlock{{Type: "text", Text: "A long ans"}}, ""}},
	{shape{"cut mid tool call", []part{{kind: "text", text: "Reading"}, {kind: "tool", id: "call_1", name: "read", text: `{"path":"a`}}, ""},
		want{agent.StopReasonError, []agent.ContentBlock{{Type: "text", Text: "Reading"}}, ""}},
	{shape{"reset mid tool call", []part{{kind: "text", text: "Reading"}, {kind: "tool", id: "call_1", name: "read", text: `{"path":"a`}}, "reset"},
		want{agent.StopReasonError, nil, ""}},
	{shape{"in-stream error", []part{{kind: "text", text: "Par"}}, "error"},
		want{agent.StopReasonError, nil, "overloaded_error"}},
}

// pieces splits s into chunks of 4 bytes (the shapes are ASCII).
func pieces(s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(4, len(s))
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func sseEvent(event string, data any) string {
	raw, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	if event == "" {
		return "data: " + string(raw) + "\n\n"
	}
	return "event: " + event + "\ndata: " + string(raw) + "\n\n"
}

var anthropicWire = wire{
	name: "anthropic", path: "/v1/messages",
	encode: func(s shape) []string {
		out := []string{sseEvent("message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": []any{},
			"usage": map[string]any{"input_tokens": 12, "output_tokens": 1}}})}
		for i, p := range s.parts {
			var block, delta map[string]any
			switch p.kind {
			case "thinking":
				block = map[string]any{"type": "thinking", "thinking": "", "signature": ""}
			case "text":
				block = map[string]any{"type": "text", "text": ""}
			case "tool":
				block = map[string]any{"type": "tool_use", "id": p.id, "name": p.name, "input": map[string]any{}}
			}
			out = append(out, sseEvent("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": block}))
			for _, piece := range pieces(p.text) {
				switch p.kind {
				case "thinking":
					delta = map[string]any{"type": "thinking_delta", "thinking": piece}
				case "text":
					delta = map[string]any{"type": "text_delta", "text": piece}
				case "tool":
					delta = map[string]any{"type": "input_json_delta", "partial_json": piece}
				}
				out = append(out, sseEvent("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta}))
			}
			if p.kind == "thinking" {
				out = append(out, sseEvent("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
					"delta": map[string]any{"type": "signature_delta", "signature": "SIG"}}))
			}
			if (s.stop != "" && s.stop != "reset") || i < len(s.parts)-1 {
				out = append(out, sseEvent("content_block_stop", map[string]any{"type": "content_block_stop", "index": i}))
			}
		}
		reason := map[string]string{"stop": "end_turn", "length": "max_tokens", "tool": "tool_use"}[s.stop]
		switch s.stop {
		case "", "reset":
		case "error":
			out = append(out, sseEvent("error", map[string]any{"type": "error", "error": map[string]any{"type": "overloaded_error", "message": "Overloaded"}}))
		default:
			out = append(out, sseEvent("message_delta", map[string]any{"type": "message_delta",
				"delta": map[string]any{"stop_reason": reason, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 7}}),
				sseEvent("message_stop", map[string]any{"type": "message_stop"}))
		}
		return out
	},
	provider: func(base string) llm.Provider { return anthropic.New(base) },
}

var openaiWire = wire{
	name: "openai", path: "/v1/chat/completions",
	encode: func(s shape) []string {
		chunk := func(delta map[string]any, finish any) string {
			return sseEvent("", map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
		}
		out := []string{chunk(map[string]any{"role": "assistant", "content": ""}, nil)}
		tools := 0
		for _, p := range s.parts {
			switch p.kind {
			case "thinking":
				for _, piece := range pieces(p.text) {
					out = append(out, chunk(map[string]any{"reasoning_content": piece}, nil))
				}
			case "text":
				for _, piece := range pieces(p.text) {
					out = append(out, chunk(map[string]any{"content": piece}, nil))
				}
			case "tool":
				out = append(out, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": tools, "id": p.id, "type": "function",
					"function": map[string]any{"name": p.name, "arguments": ""}}}}, nil))
				for _, piece := range pieces(p.text) {
					out = append(out, chunk(map[string]any{"tool_calls": []any{map[string]any{"index": tools,
						"function": map[string]any{"arguments": piece}}}}, nil))
				}
				tools++
			}
		}
		switch s.stop {
		case "", "reset":
		case "error":
			out = append(out, sseEvent("", map[string]any{"error": map[string]any{"message": "Overloaded", "type": "overloaded_error", "code": nil}}))
		default:
			reason := map[string]string{"stop": "stop", "length": "length", "tool": "tool_calls"}[s.stop]
			out = append(out, chunk(map[string]any{}, reason),
				sseEvent("", map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": []any{},
					"usage": map[string]any{"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}}),
				"data: [DONE]\n\n")
		}
		return out
	},
	provider: func(base string) llm.Provider { return openai.New(base + "/v1") },
}

var wires = []wire{anthropicWire, openaiWire}

// server serves one response per request, in order, and keeps the
// request bodies.
type server struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func serve(t *testing.T, w wire, responses ...[]string) *server {
	return serveThenReset(t, w, false, responses...)
}

// serveThenReset is serve; with reset, the connection is cut by a TCP
// reset after the last response's chunks.
func serveThenReset(t *testing.T, w wire, reset bool, responses ...[]string) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.bodies)
		s.bodies = append(s.bodies, string(body))
		s.mu.Unlock()
		if r.URL.Path != w.path || n >= len(responses) {
			http.Error(rw, "unexpected request "+r.URL.Path, http.StatusNotFound)
			return
		}
		rw.Header().Set("Content-Type", "text/event-stream")
		rw.WriteHeader(http.StatusOK)
		for _, c := range responses[n] {
			fmt.Fprint(rw, c)
			rw.(http.Flusher).Flush()
		}
		if reset {
			if conn, _, err := rw.(http.Hijacker).Hijack(); err == nil {
				if tc, ok := conn.(*net.TCPConn); ok {
					_ = tc.SetLinger(0)
				}
				_ = conn.Close()
			}
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func complete(t *testing.T, w wire, s *server, msgs []agent.Message, onDelta func(llm.Delta)) agent.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m := w.provider(s.URL).Complete(ctx, llm.Request{SessionID: "s1", Provider: w.name, Model: "m", Messages: msgs,
		Secret: "sk-test-0123456789abcdef", OnDelta: onDelta, MaxTokens: 256,
		Tools: []agent.ToolSpec{{Name: "read", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}})
	m.API = agent.APIOf(w.name)
	return m
}

func classify(m agent.Message) retry.Classification {
	return retry.Classify(retry.Outcome{StopReason: string(m.StopReason), ErrorMessage: m.ErrorMessage,
		ErrorStatus: m.ErrorStatus, ErrorType: m.ErrorType, ShouldRetry: m.ShouldRetry, RetryAfterMs: m.RetryAfterMs})
}

// withoutSignatures drops thinking signatures (each provider has its own).
func withoutSignatures(content []agent.ContentBlock) []agent.ContentBlock {
	var out []agent.ContentBlock
	for _, b := range content {
		b.Signature = ""
		out = append(out, b)
	}
	return out
}

// Every shape, every provider: content, stop reason, error type, and the
// streamed deltas joining to each block's final text.
func TestConformance_Shapes(t *testing.T) {
	for _, w := range wires {
		for _, tc := range shapes {
			t.Run(w.name+"/"+tc.name, func(t *testing.T) {
				s := serveThenReset(t, w, tc.stop == "reset", w.encode(tc.shape))
				joined := map[int]string{}
				var first []llm.Delta // the first delta of each block
				m := complete(t, w, s, []agent.Message{agent.TextMessage(agent.RoleUser, "hi")}, func(d llm.Delta) {
					if d.Type == "" {
						return
					}
					if _, seen := joined[d.ContentIndex]; !seen {
						first = append(first, d)
					}
					joined[d.ContentIndex] += d.Delta
				})
				if m.StopReason != tc.want.stop {
					t.Fatalf("stop reason %q (%s), want %q", m.StopReason, m.ErrorMessage, tc.want.stop)
				}
				if tc.want.stop == agent.StopReasonError && m.ErrorMessage == "" {
					t.Fatalf("an error without a message: %+v", m)
				}
				if m.ErrorType != tc.want.errType {
					t.Fatalf("error type %q, want %q", m.ErrorType, tc.want.errType)
				}
				if tc.want.content != nil && !reflect.DeepEqual(withoutSignatures(m.Content), tc.want.content) {
					got, _ := json.Marshal(m.Content)
					t.Fatalf("content %s", got)
				}
				// The deltas join to each block's text, or to what was
				// streamed of a failed answer (its parts, in order).
				for i, p := range tc.parts {
					if joined[i] != p.text {
						t.Fatalf("deltas of block %d join to %q, want %q", i, joined[i], p.text)
					}
					if p.kind == "tool" && (first[i].Type != agent.DeltaToolCall || first[i].ToolCallID != p.id || first[i].ToolName != p.name) {
						t.Fatalf("tool call %d announced as %+v", i, first[i])
					}
				}
				if tc.want.stop == agent.StopReasonError {
					if calls := m.ToolCalls(); len(calls) != 0 {
						t.Fatalf("a failed answer kept tool calls %+v", calls)
					}
					// A cut stream or an overload is retried.
					if c := classify(m); c.Class != retry.ClassRetryable {
						t.Fatalf("classified %q (pattern %q), want retryable; text %q", c.Class, c.Pattern, m.ErrorMessage)
					}
				}
			})
		}
	}
}

// A tool loop: the answer with thinking and a tool call goes back with its
// result in the next request in a form the server accepts (the call's id
// answered, the thinking as the server needs it: Anthropic's signed block,
// DeepSeek's reasoning_content), and the second answer ends the turn.
func TestConformance_ToolLoopFollowUp(t *testing.T) {
	first := shape{"tool", []part{{kind: "thinking", text: "Read it."}, {kind: "tool", id: "call_7", name: "read", text: toolArgs}}, "tool"}
	second := shape{"done", []part{{kind: "text", text: "Done."}}, "stop"}
	for _, w := range wires {
		t.Run(w.name, func(t *testing.T) {
			s := serve(t, w, w.encode(first), w.encode(second))
			msgs := []agent.Message{agent.TextMessage(agent.RoleUser, "read a.go")}
			m := complete(t, w, s, msgs, nil)
			if m.StopReason != agent.StopReasonToolUse {
				t.Fatalf("first answer %+v", m)
			}
			result := agent.Message{Role: agent.RoleToolResult, ToolCallID: "call_7", ToolName: "read",
				Content: []agent.ContentBlock{{Type: "text", Text: "package a"}}}
			msgs = append(msgs, m, result)
			if m2 := complete(t, w, s, msgs, nil); m2.StopReason != agent.StopReasonStop || m2.Text() != "Done." {
				t.Fatalf("second answer %+v", m2)
			}
			body := s.bodies[1]
			var wantIn []string
			switch w.name {
			case "anthropic":
				wantIn = []string{`"type":"thinking"`, `"signature":"SIG"`, `"tool_use_id":"call_7"`, `"id":"call_7"`}
			case "openai":
				wantIn = []string{`"reasoning_content":"Read it."`, `"tool_call_id":"call_7"`, `"id":"call_7"`}
			}
			for _, s := range wantIn {
				if !strings.Contains(body, s) {
					t.Fatalf("follow-up request lacks %s:\n%s", s, body)
				}
			}
		})
	}
}
