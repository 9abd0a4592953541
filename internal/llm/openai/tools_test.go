package openai

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/retry"
)

// chunk is one Chat Completions stream chunk with a delta for choice 0.
func chunk(delta map[string]any, finish any) string {
	raw, err := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	if err != nil {
		panic(err)
	}
	return "data: " + string(raw) + "\n\n"
}

func content(s string) string { return chunk(map[string]any{"content": s}, nil) }

// toolStart is the first chunk of tool call index i: id, type and name.
func toolStart(i int, id, name string) string {
	return chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": id, "type": "function",
		"function": map[string]any{"name": name, "arguments": ""}}}}, nil)
}

// toolArgs is an arguments piece of tool call index i.
func toolArgs(i int, args string) string {
	return chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": args}}}}, nil)
}

func toolArgChunks(i int, args string, size int) []string {
	var out []string
	for len(args) > 0 {
		n := min(size, len(args))
		out = append(out, toolArgs(i, args[:n]))
		args = args[n:]
	}
	return out
}

func finish(reason string) string { return chunk(map[string]any{}, reason) }

// recorder collects the deltas of a call.
// recorder keeps the deltas of a call, and apart the output token counts
// reported (usage-only deltas).
type recorder struct {
	deltas []llm.Delta
	tokens []int
}

func (r *recorder) add(d llm.Delta) {
	if d.Type == "" && d.Delta == "" && d.Usage != nil && d.Usage.Output > 0 {
		r.tokens = append(r.tokens, d.Usage.Output)
		return
	}
	r.deltas = append(r.deltas, d)
}

func (r *recorder) joined() map[int]string {
	out := map[int]string{}
	for _, d := range r.deltas {
		out[d.ContentIndex] += d.Delta
	}
	return out
}

// checkDeltas asserts that the deltas of every block join to its final
// text (or raw tool-call arguments), with matching types, and that a tool
// call's first delta names it.
func checkDeltas(t *testing.T, r *recorder, m agent.Message) {
	t.Helper()
	joined := r.joined()
	seen := map[int]bool{}
	for _, d := range r.deltas {
		if d.ContentIndex < 0 || d.ContentIndex >= len(m.Content) {
			t.Fatalf("delta %+v names block %d of %d", d, d.ContentIndex, len(m.Content))
		}
		b := m.Content[d.ContentIndex]
		want := map[string]string{"text": agent.DeltaText, "thinking": agent.DeltaThinking, "toolCall": agent.DeltaToolCall}[b.Type]
		if d.Type != want {
			t.Fatalf("delta %+v for a %s block, want type %s", d, b.Type, want)
		}
		if b.Type == "toolCall" && !seen[d.ContentIndex] && (d.ToolCallID != b.ToolCall.ID || d.ToolName != b.ToolCall.Name) {
			t.Fatalf("first delta of tool call %d = %+v, want id %q name %q", d.ContentIndex, d, b.ToolCall.ID, b.ToolCall.Name)
		}
		seen[d.ContentIndex] = true
	}
	for i, b := range m.Content {
		want := b.Text
		if b.Type == "toolCall" {
			want = rawArguments(t, b.ToolCall.Arguments)
		}
		if joined[i] != want {
			t.Fatalf("deltas of block %d join to %q, want %q", i, joined[i], want)
		}
	}
}

func rawArguments(t *testing.T, args json.RawMessage) string {
	t.Helper()
	if llm.IsArgumentsObject(args) {
		return string(args)
	}
	var s string
	if err := json.Unmarshal(args, &s); err != nil {
		t.Fatalf("arguments %s are neither an object nor a JSON string", args)
	}
	return s
}

func jsonEqual(t *testing.T, a []byte, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return reflect.DeepEqual(x, y)
}

func toolSpecs() []agent.ToolSpec {
	return []agent.ToolSpec{
		{Name: "read", Description: "Read a file", Parameters: json.RawMessage(
			`{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`)},
		{Name: "ls", Parameters: nil},
	}
}

func bodyField(t *testing.T, body, field string) (json.RawMessage, bool) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	v, ok := m[field]
	return v, ok
}

// Tools go out with every request as function tools; without tools no
// tools field is sent.
func TestComplete_SendsTools(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { stream(w, chunkHel, chunkLo, chunkDone) })
	req := request()
	req.Tools = toolSpecs()
	if m := call(t, s, req); m.StopReason != agent.StopReasonStop {
		t.Fatalf("message = %+v", m)
	}
	if m := call(t, s, request()); m.StopReason != agent.StopReasonStop {
		t.Fatalf("message = %+v", m)
	}
	got, _ := bodyField(t, s.bodies[0], "tools")
	want := `[{"type":"function","function":{"name":"read","description":"Read a file","parameters":{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}}},` +
		`{"type":"function","function":{"name":"ls","parameters":{"type":"object","properties":{}}}}]`
	if !jsonEqual(t, got, want) {
		t.Fatalf("tools = %s\nwant %s", got, want)
	}
	if _, ok := bodyField(t, s.bodies[1], "tools"); ok {
		t.Fatalf("a request without tools sent a tools field: %s", s.bodies[1])
	}
}

const (
	readArgs = `{"path": "internal/llm/openai/openai.go", "limit": 40}`
	lsArgs   = `{"dir":"internal/llm","glob":"*\"quoted\"*"}`
)

// Two streamed tool calls (pieces interleaved by index, as parallel calls
// may be) come back as two toolCall blocks in order with their exact
// arguments and StopReason toolUse; the deltas join to them.
func TestComplete_StreamsToolCalls(t *testing.T) {
	chunks := []string{
		chunk(map[string]any{"role": "assistant", "reasoning_content": "The user wants "}, nil),
		chunk(map[string]any{"reasoning_content": "a listing."}, nil),
		content("Let me "), content("look."),
		toolStart(0, "call_read", "read"),
	}
	chunks = append(chunks, toolArgChunks(0, readArgs[:20], 4)...)
	chunks = append(chunks, toolStart(1, "call_ls", "ls"))
	chunks = append(chunks, toolArgChunks(1, lsArgs[:10], 3)...)
	chunks = append(chunks, toolArgChunks(0, readArgs[20:], 6)...)
	chunks = append(chunks, toolArgChunks(1, lsArgs[10:], 5)...)
	chunks = append(chunks, finish("tool_calls"), chunkUse, chunkDone)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { stream(w, chunks...) })
	req := request()
	req.Tools = toolSpecs()
	var rec recorder
	req.OnDelta = rec.add
	m := call(t, s, req)
	if m.StopReason != agent.StopReasonToolUse {
		t.Fatalf("message = %+v, want toolUse", m)
	}
	want := []agent.ContentBlock{
		{Type: "thinking", Text: "The user wants a listing.", Signature: FieldReasoningContent},
		{Type: "text", Text: "Let me look."},
		{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "call_read", Name: "read", Arguments: json.RawMessage(readArgs)}},
		{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "call_ls", Name: "ls", Arguments: json.RawMessage(lsArgs)}},
	}
	if !reflect.DeepEqual(m.Content, want) {
		got, _ := json.Marshal(m.Content)
		t.Fatalf("content = %s", got)
	}
	if m.Usage == nil || m.Usage.Input != 6 || m.Usage.CacheRead != 4 || m.Usage.Output != 2 {
		t.Fatalf("usage = %+v", m.Usage)
	}
	checkDeltas(t, &rec, m)
	if n := len(rec.deltas); n < 20 {
		t.Fatalf("%d deltas, want one per streamed piece", n)
	}
	// The thinking goes back as reasoning_content with the tool calls
	// (DeepSeek's thinking mode answers 400 without it).
	next, err := json.Marshal(messages("", []agent.Message{m}))
	if err != nil {
		t.Fatal(err)
	}
	wantNext := `[{"role":"assistant","content":"Let me look.","reasoning_content":"The user wants a listing.","tool_calls":[` +
		`{"id":"call_read","type":"function","function":{"name":"read","arguments":` + mustJSON(readArgs) + `}},` +
		`{"id":"call_ls","type":"function","function":{"name":"ls","arguments":` + mustJSON(lsArgs) + `}}]}]`
	if !jsonEqual(t, next, wantNext) {
		t.Fatalf("sent back as %s\nwant %s", next, wantNext)
	}
}

func mustJSON(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(raw)
}

// Arguments that are not valid JSON keep the call, the raw text stored
// as a JSON string (sent back as {}); none at all is {}; a call without
// an id gets one; finish_reason "stop" with tool calls is toolUse; a new
// id at a used index is a new call.
func TestComplete_InvalidToolArgumentsSurvive(t *testing.T) {
	const broken = `{"path": "a.go", "limit": `
	chunks := []string{toolStart(0, "call_bad", "read")}
	chunks = append(chunks, toolArgChunks(0, broken, 4)...)
	chunks = append(chunks,
		chunk(map[string]any{"tool_calls": []any{map[string]any{"index": 1, "type": "function", "function": map[string]any{"name": "ls"}}}}, nil),
		toolStart(0, "call_x", "ls"), // a server numbering every call 0
		toolArgs(0, `{"dir":"."}`),
		finish("stop"), chunkDone)
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { stream(w, chunks...) })
	req := request()
	var rec recorder
	req.OnDelta = rec.add
	m := call(t, s, req)
	calls := m.ToolCalls()
	if m.StopReason != agent.StopReasonToolUse || len(calls) != 3 {
		b, _ := json.Marshal(m)
		t.Fatalf("message = %s, want toolUse with three tool calls", b)
	}
	if string(calls[0].Arguments) != mustJSON(broken) || llm.IsArgumentsObject(calls[0].Arguments) {
		t.Fatalf("invalid arguments stored as %s, want the JSON string %s", calls[0].Arguments, mustJSON(broken))
	}
	if calls[1].ID != "call_1" || calls[1].Name != "ls" || string(calls[1].Arguments) != "{}" {
		t.Fatalf("call without id or arguments = %+v, want id call_1 and {}", calls[1])
	}
	if calls[2].ID != "call_x" || string(calls[2].Arguments) != `{"dir":"."}` {
		t.Fatalf("second call at the same index = %+v", calls[2])
	}
	checkDeltas(t, &rec, m)
	if _, err := json.Marshal(m); err != nil {
		t.Fatalf("message does not store as JSON: %v", err)
	}
	next, err := json.Marshal(messages("", []agent.Message{m}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(next), `{"id":"call_bad","function":{"arguments":"{}","name":"read"},"type":"function"}`) {
		t.Fatalf("invalid arguments sent back as %s, want {}", next)
	}
}

// The next request carries the tool calls on the assistant message and
// each tool result as a role "tool" message with its tool_call_id, a line
// for each of its images (text only there).
func TestComplete_SendsToolResultsBack(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { stream(w, chunkHel, chunkLo, chunkDone) })
	req := request()
	req.Tools = toolSpecs()
	req.Messages = []agent.Message{
		agent.TextMessage(agent.RoleUser, "look around"),
		{Role: agent.RoleAssistant, StopReason: agent.StopReasonToolUse, Content: []agent.ContentBlock{
			{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "call_read", Name: "read", Arguments: json.RawMessage(readArgs)}},
			{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "call_ls", Name: "ls", Arguments: json.RawMessage(lsArgs)}},
		}},
		{Role: agent.RoleToolResult, ToolCallID: "call_read", ToolName: "read", Content: []agent.ContentBlock{{Type: "text", Text: "package openai"},
			{Type: agent.BlockImage, Data: "iVBORw0KGgo=", MimeType: "image/png"}}},
		{Role: agent.RoleToolResult, ToolCallID: "call_ls", ToolName: "ls", IsError: true, Content: []agent.ContentBlock{{Type: "text", Text: "no such directory"}}},
	}
	if m := call(t, s, req); m.StopReason != agent.StopReasonStop {
		t.Fatalf("message = %+v", m)
	}
	got, _ := bodyField(t, s.bodies[0], "messages")
	want := `[{"role":"system","content":"be brief"},{"role":"user","content":"look around"},
	{"role":"assistant","tool_calls":[
		{"id":"call_read","type":"function","function":{"name":"read","arguments":` + mustJSON(readArgs) + `}},
		{"id":"call_ls","type":"function","function":{"name":"ls","arguments":` + mustJSON(lsArgs) + `}}]},
	{"role":"tool","tool_call_id":"call_read","content":"package openai\n[image image/png, 12 bytes of base64, not shown: this API's tool results carry text only]"},
	{"role":"tool","tool_call_id":"call_ls","content":"no such directory"}]`
	if !jsonEqual(t, got, want) {
		t.Fatalf("messages = %s\nwant %s", got, want)
	}
}

// Text deltas: an error object mid-stream, or a cut in the middle of a
// chunk, leaves the deltas of what arrived and returns the error.
func TestComplete_DeltasOfAFailedStream(t *testing.T) {
	cases := map[string]http.HandlerFunc{
		"error object mid-stream": func(w http.ResponseWriter, r *http.Request) {
			stream(w, chunkHel, content(" wor"), chunkErr)
		},
		"cut mid-delta": func(w http.ResponseWriter, r *http.Request) {
			stream(w, chunkHel, content(" wor"))
			fmt.Fprint(w, `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"ld and mo`)
			reset(w)
		},
	}
	for name, handle := range cases {
		t.Run(name, func(t *testing.T) {
			req := request()
			var rec recorder
			req.OnDelta = rec.add
			m := call(t, newServer(t, handle), req)
			t.Logf("errorMessage: %s", m.ErrorMessage)
			if m.StopReason != agent.StopReasonError {
				t.Fatalf("message = %+v, want an error", m)
			}
			if c := classify(m); c.Class != retry.ClassRetryable {
				t.Fatalf("classified %q, want retryable; text %q", c.Class, m.ErrorMessage)
			}
			want := []llm.Delta{{Type: agent.DeltaText, Delta: "Hel"}, {Type: agent.DeltaText, Delta: " wor"}}
			if !reflect.DeepEqual(rec.deltas, want) {
				t.Fatalf("deltas = %+v, want %+v", rec.deltas, want)
			}
		})
	}
}

// Deltas of a plain answer join to its text.
func TestComplete_TextDeltas(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { stream(w, chunkHel, chunkLo, chunkUse, chunkDone) })
	req := request()
	var rec recorder
	req.OnDelta = rec.add
	m := call(t, s, req)
	if m.StopReason != agent.StopReasonStop || m.Text() != "Hello" || len(rec.deltas) != 2 {
		t.Fatalf("message = %+v, deltas %+v", m, rec.deltas)
	}
	checkDeltas(t, &rec, m)
}

// An OpenAI-compatible stream's usage chunk (stream_options.include_usage)
// reaches OnDelta as an output token count.
func TestComplete_ReportsOutputTokens(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { stream(w, chunkHel, chunkLo, chunkUse, chunkDone) })
	req := request()
	var rec recorder
	var usage []agent.Usage
	req.OnDelta = func(d llm.Delta) {
		rec.add(d)
		if d.Usage != nil {
			usage = append(usage, *d.Usage)
		}
	}
	m := call(t, s, req)
	if m.Text() != "Hello" || !reflect.DeepEqual(rec.tokens, []int{2}) || len(rec.deltas) != 2 {
		t.Fatalf("text %q, output tokens reported %v (deltas %+v), want [2]", m.Text(), rec.tokens, rec.deltas)
	}
	// Issue 24: the whole report goes with the count: input less the
	// cached tokens, which are cache reads.
	if len(usage) != 1 || usage[0] != (agent.Usage{Input: 6, Output: 2, CacheRead: 4}) {
		t.Fatalf("usage reports %+v, want input 6, cache read 4, output 2", usage)
	}
	// Without a usage chunk (a server that ignores include_usage):
	// nothing reported, the activity estimates.
	s = newServer(t, func(w http.ResponseWriter, r *http.Request) { stream(w, chunkHel, chunkLo, chunkDone) })
	rec = recorder{}
	req.OnDelta = rec.add
	if m := call(t, s, req); m.Text() != "Hello" || len(rec.tokens) != 0 {
		t.Fatalf("text %q, tokens %v without a usage chunk", m.Text(), rec.tokens)
	}
}
