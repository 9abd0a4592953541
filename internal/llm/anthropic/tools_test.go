package anthropic

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

// Event builders for streams with tool use.

func sse(typ string, data any) string {
	raw, err := json.Marshal(data)
	if err != nil {
		panic(err)
	}
	return "event: " + typ + "\ndata: " + string(raw) + "\n\n"
}

func evTextStart(i int) string {
	return sse("content_block_start", map[string]any{"type": "content_block_start", "index": i,
		"content_block": map[string]any{"type": "text", "text": ""}})
}

func evThinkingStart(i int) string {
	return sse("content_block_start", map[string]any{"type": "content_block_start", "index": i,
		"content_block": map[string]any{"type": "thinking", "thinking": "", "signature": ""}})
}

func evToolStart(i int, id, name string) string {
	return sse("content_block_start", map[string]any{"type": "content_block_start", "index": i,
		"content_block": map[string]any{"type": "tool_use", "id": id, "name": name, "input": map[string]any{}}})
}

func evDelta(i int, delta map[string]any) string {
	return sse("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": delta})
}

func evText(i int, text string) string {
	return evDelta(i, map[string]any{"type": "text_delta", "text": text})
}

func evThinking(i int, text string) string {
	return evDelta(i, map[string]any{"type": "thinking_delta", "thinking": text})
}

func evJSON(i int, partial string) string {
	return evDelta(i, map[string]any{"type": "input_json_delta", "partial_json": partial})
}

func evStop(i int) string {
	return sse("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
}

func evFinish(stopReason string) string {
	return sse("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stopReason, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 9}}) +
		sse("message_stop", map[string]any{"type": "message_stop"})
}

// evJSONChunks splits a tool call's argument JSON into many small deltas.
func evJSONChunks(i int, args string, size int) []string {
	var out []string
	for len(args) > 0 {
		n := min(size, len(args))
		out = append(out, evJSON(i, args[:n]))
		args = args[n:]
	}
	return out
}

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

// joined concatenates the deltas per content index.
func (r *recorder) joined() map[int]string {
	out := map[int]string{}
	for _, d := range r.deltas {
		out[d.ContentIndex] += d.Delta
	}
	return out
}

// checkDeltas asserts that the deltas of every block concatenate to its
// final text (or tool-call arguments), that their types match the blocks
// and that a tool call's first delta names it.
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

// rawArguments is the argument text the model sent: the arguments, or
// the text inside a JSON string (invalid JSON from the model).
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

func toolSpecs() []agent.ToolSpec {
	return []agent.ToolSpec{
		{Name: "read", Description: "Read a file", Parameters: json.RawMessage(
			`{"type":"object","properties":{"path":{"type":"string","description":"file path"},"limit":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}`)},
		{Name: "bash", Description: "Run a command", Parameters: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`)},
	}
}

// Tools go out with every request as custom tools with input_schema;
// without tools no tools field is sent.
func TestComplete_SendsTools(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		stream(w, evStart, evBlockStart, evHello, evEnd)
	})
	req := request()
	req.Tools = toolSpecs()
	if m := call(t, s, req); m.StopReason != agent.StopReasonStop {
		t.Fatalf("message = %+v", m)
	}
	if m := call(t, s, request()); m.StopReason != agent.StopReasonStop {
		t.Fatalf("message = %+v", m)
	}
	var body struct {
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal([]byte(s.bodies[0]), &body); err != nil {
		t.Fatal(err)
	}
	want := `[{"name":"read","description":"Read a file","input_schema":{"type":"object","properties":{"path":{"type":"string","description":"file path"},"limit":{"type":"integer","minimum":1}},"required":["path"],"additionalProperties":false}},` +
		`{"name":"bash","description":"Run a command","input_schema":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}]`
	if !jsonEqual(t, body.Tools, want) {
		t.Fatalf("tools = %s\nwant %s", body.Tools, want)
	}
	if strings.Contains(s.bodies[1], `"tools"`) {
		t.Fatalf("a request without tools sent a tools field: %s", s.bodies[1])
	}
}

// A malformed or missing schema still sends a valid object schema.
func TestInputSchema_Malformed(t *testing.T) {
	for _, raw := range []string{"", "not json", "[1]", "null", `{"type":"object"}`} {
		got, err := json.Marshal(tools([]agent.ToolSpec{{Name: "x", Parameters: json.RawMessage(raw)}}))
		if err != nil {
			t.Fatalf("schema %q: %v", raw, err)
		}
		if !jsonEqual(t, got, `[{"name":"x","input_schema":{"type":"object","properties":{}}}]`) {
			t.Fatalf("schema %q sent as %s", raw, got)
		}
	}
}

const (
	readArgs = `{"path": "internal/llm/anthropic/anthropic.go", "limit": 40}`
	bashArgs = `{"command":"go test ./... -run 'Test\"Quoted\"'","timeout":120}`
)

func toolUseStream() []string {
	events := []string{evStart, evThinkingStart(0), evThinking(0, "The user wants "), evThinking(0, "a fix."), evStop(0),
		evTextStart(1), evText(1, "Let me "), evText(1, "look."), evStop(1),
		evToolStart(2, "toolu_01", "read"), evJSON(2, "")}
	events = append(events, evJSONChunks(2, readArgs, 5)...)
	events = append(events, evStop(2), evToolStart(3, "toolu_02", "bash"))
	events = append(events, evJSONChunks(3, bashArgs, 3)...)
	return append(events, evStop(3), evFinish("tool_use"))
}

// Two streamed tool calls come back as two toolCall blocks in order, with
// their exact arguments, StopReason toolUse, and deltas that join to them.
func TestComplete_StreamsToolCalls(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { stream(w, toolUseStream()...) })
	req := request()
	req.Tools = toolSpecs()
	var rec recorder
	req.OnDelta = rec.add
	m := call(t, s, req)
	if m.StopReason != agent.StopReasonToolUse {
		t.Fatalf("message = %+v, want toolUse", m)
	}
	want := []agent.ContentBlock{
		{Type: "thinking", Text: "The user wants a fix."},
		{Type: "text", Text: "Let me look."},
		{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "toolu_01", Name: "read", Arguments: json.RawMessage(readArgs)}},
		{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "toolu_02", Name: "bash", Arguments: json.RawMessage(bashArgs)}},
	}
	if !reflect.DeepEqual(m.Content, want) {
		got, _ := json.Marshal(m.Content)
		t.Fatalf("content = %s", got)
	}
	checkDeltas(t, &rec, m)
	if n := len(rec.deltas); n < 20 {
		t.Fatalf("%d deltas, want one per streamed piece", n)
	}
}

// Input that is not valid JSON (a model bug) keeps the call, its raw text
// stored as a JSON string; a call without any input delta gets {}.
func TestComplete_InvalidToolArgumentsSurvive(t *testing.T) {
	const broken = `{"path": "a.go", "limit": `
	events := []string{evStart, evToolStart(0, "toolu_bad", "read")}
	events = append(events, evJSONChunks(0, broken, 4)...)
	events = append(events, evStop(0), evToolStart(1, "toolu_empty", "ls"), evJSON(1, ""), evStop(1),
		evToolStart(2, "toolu_array", "ls"), evJSON(2, `[1, 2]`), evStop(2), evFinish("tool_use"))
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { stream(w, events...) })
	req := request()
	var rec recorder
	req.OnDelta = rec.add
	m := call(t, s, req)
	if m.StopReason != agent.StopReasonToolUse || len(m.ToolCalls()) != 3 {
		t.Fatalf("message = %+v, want three tool calls", m)
	}
	calls := m.ToolCalls()
	wantBad, _ := json.Marshal(broken)
	if string(calls[0].Arguments) != string(wantBad) || llm.IsArgumentsObject(calls[0].Arguments) {
		t.Fatalf("invalid arguments stored as %s, want the JSON string %s", calls[0].Arguments, wantBad)
	}
	if string(calls[1].Arguments) != "{}" {
		t.Fatalf("empty arguments stored as %s, want {}", calls[1].Arguments)
	}
	if string(calls[2].Arguments) != `"[1, 2]"` {
		t.Fatalf("non-object arguments stored as %s, want a JSON string", calls[2].Arguments)
	}
	checkDeltas(t, &rec, m)
	raw, err := json.Marshal(m)
	if err != nil || !json.Valid(raw) {
		t.Fatalf("message does not store as JSON: %v", err)
	}
	// Sent back, the invalid arguments go as {} (input must be an object).
	next, err := json.Marshal(messages([]agent.Message{m}))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"assistant","content":[{"type":"tool_use","id":"toolu_bad","name":"read","input":{}},` +
		`{"type":"tool_use","id":"toolu_empty","name":"ls","input":{}},{"type":"tool_use","id":"toolu_array","name":"ls","input":{}}]}]`
	if !jsonEqual(t, next, want) {
		t.Fatalf("sent back as %s\nwant %s", next, want)
	}
}

// The next request carries the tool calls as tool_use and the consecutive
// tool results as tool_result blocks of ONE user message; a result's
// images (an MCP tool's) follow its text in the block.
func TestComplete_SendsToolResultsBack(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) { stream(w, evStart, evBlockStart, evHello, evEnd) })
	req := request()
	req.Tools = toolSpecs()
	req.Messages = []agent.Message{
		agent.TextMessage(agent.RoleUser, "run the tests"),
		{Role: agent.RoleAssistant, StopReason: agent.StopReasonToolUse, Content: []agent.ContentBlock{
			{Type: "text", Text: "Reading first."},
			{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "toolu_01", Name: "read", Arguments: json.RawMessage(readArgs)}},
			{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "toolu_02", Name: "bash", Arguments: json.RawMessage(bashArgs)}},
		}},
		{Role: agent.RoleToolResult, ToolCallID: "toolu_01", ToolName: "read", Content: []agent.ContentBlock{{Type: "text", Text: "package anthropic"},
			{Type: agent.BlockImage, Data: "iVBORw0KGgo=", MimeType: "image/png"}}},
		{Role: agent.RoleToolResult, ToolCallID: "toolu_02", ToolName: "bash", IsError: true, Content: []agent.ContentBlock{{Type: "text", Text: "exit status 1"}}},
		{Role: agent.RoleAssistant, StopReason: agent.StopReasonToolUse, Content: []agent.ContentBlock{
			{Type: "toolCall", ToolCall: &agent.ToolCall{ID: "toolu_03", Name: "bash", Arguments: json.RawMessage(`{"command":"true"}`)}},
		}},
		{Role: agent.RoleToolResult, ToolCallID: "toolu_03", ToolName: "bash"}, // empty output
		agent.TextMessage(agent.RoleUser, "and now?"),
	}
	if m := call(t, s, req); m.StopReason != agent.StopReasonStop {
		t.Fatalf("message = %+v", m)
	}
	var body struct {
		Messages json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal([]byte(s.bodies[0]), &body); err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"user","content":[{"type":"text","text":"run the tests"}]},
	{"role":"assistant","content":[{"type":"text","text":"Reading first."},
		{"type":"tool_use","id":"toolu_01","name":"read","input":{"path":"internal/llm/anthropic/anthropic.go","limit":40}},
		{"type":"tool_use","id":"toolu_02","name":"bash","input":{"command":"go test ./... -run 'Test\"Quoted\"'","timeout":120}}]},
	{"role":"user","content":[
		{"type":"tool_result","tool_use_id":"toolu_01","is_error":false,"content":[{"type":"text","text":"package anthropic"},
			{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}]},
		{"type":"tool_result","tool_use_id":"toolu_02","is_error":true,"content":[{"type":"text","text":"exit status 1"}]}]},
	{"role":"assistant","content":[{"type":"tool_use","id":"toolu_03","name":"bash","input":{"command":"true"}}]},
	{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_03","is_error":false,"cache_control":{"type":"ephemeral"}}]},
	{"role":"user","content":[{"type":"text","text":"and now?","cache_control":{"type":"ephemeral"}}]}]`
	if !jsonEqual(t, body.Messages, want) {
		t.Fatalf("messages = %s\nwant %s", body.Messages, want)
	}
}

// Text deltas: an overloaded_error event mid-stream, or a cut in the
// middle of an event, leaves the deltas of what arrived and returns the
// error.
func TestComplete_DeltasOfAFailedStream(t *testing.T) {
	cases := map[string]http.HandlerFunc{
		"overloaded_error mid-stream": func(w http.ResponseWriter, r *http.Request) {
			stream(w, evStart, evBlockStart, evHello, evWorld, evOverloaded)
		},
		"cut mid-delta": func(w http.ResponseWriter, r *http.Request) {
			stream(w, evStart, evBlockStart, evHello, evWorld)
			fmt.Fprint(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" and mo")
			reset(w)
		},
	}
	for name, handle := range cases {
		t.Run(name, func(t *testing.T) {
			req := request()
			var rec recorder
			req.OnDelta = rec.add
			m := call(t, newServer(t, handle), req)
			if m.StopReason != agent.StopReasonError {
				t.Fatalf("message = %+v, want an error", m)
			}
			if c := classify(m); c.Class != retry.ClassRetryable {
				t.Fatalf("classified %q, want retryable; text %q", c.Class, m.ErrorMessage)
			}
			want := []llm.Delta{{Type: agent.DeltaText, Delta: "Hello"}, {Type: agent.DeltaText, Delta: " world"}}
			if !reflect.DeepEqual(rec.deltas, want) {
				t.Fatalf("deltas = %+v, want %+v", rec.deltas, want)
			}
		})
	}
}

// Deltas of a plain answer join to its text; blocks the project does not
// keep (a server tool use) take no content index. A redacted_thinking
// block is kept, without text or delta, and goes back as it came (the API
// wants a thinking turn's blocks back with its tool use).
func TestComplete_RedactedThinkingKeptServerToolsSkipped(t *testing.T) {
	redacted := sse("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
		"content_block": map[string]any{"type": "redacted_thinking", "data": "abc"}})
	server := sse("content_block_start", map[string]any{"type": "content_block_start", "index": 1,
		"content_block": map[string]any{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": map[string]any{}}})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		stream(w, evStart, redacted, evStop(0), server, evStop(1), evTextStart(2), evText(2, "Hello"), evText(2, " world"), evStop(2), evFinish("end_turn"))
	})
	req := request()
	var rec recorder
	req.OnDelta = rec.add
	m := call(t, s, req)
	want := []agent.ContentBlock{{Type: "thinking", Signature: "abc", Redacted: true}, {Type: "text", Text: "Hello world"}}
	if m.StopReason != agent.StopReasonStop || !reflect.DeepEqual(m.Content, want) {
		t.Fatalf("message = %+v", m)
	}
	checkDeltas(t, &rec, m)
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var stored agent.Message
	if err := json.Unmarshal(raw, &stored); err != nil {
		t.Fatal(err)
	}
	next, err := json.Marshal(messages([]agent.Message{stored}))
	if err != nil {
		t.Fatal(err)
	}
	wantNext := `[{"role":"assistant","content":[{"type":"redacted_thinking","data":"abc"},{"type":"text","text":"Hello world"}]}]`
	if !jsonEqual(t, next, wantNext) {
		t.Fatalf("sent back %s\nwant %s", next, wantNext)
	}
}

// The stream's output token counts reach OnDelta as they arrive:
// message_start's first count, then message_delta's cumulative one, in
// the order of the wire (after the text).
func TestComplete_ReportsOutputTokens(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		stream(w, evStart, evBlockStart, evHello, evWorld, evEnd)
	})
	req := request()
	var rec recorder
	var order []string
	var usage []agent.Usage
	req.OnDelta = func(d llm.Delta) {
		rec.add(d)
		if d.Usage != nil {
			usage = append(usage, *d.Usage)
		}
		if d.Usage != nil && d.Usage.Output > 0 {
			order = append(order, "tokens")
		} else {
			order = append(order, "text")
		}
	}
	m := call(t, s, req)
	if m.Text() != "Hello world" || !reflect.DeepEqual(rec.tokens, []int{1, 5}) {
		t.Fatalf("text %q, output tokens reported %v, want [1 5]", m.Text(), rec.tokens)
	}
	if got := strings.Join(order, " "); got != "tokens text text tokens" {
		t.Fatalf("order %q, want the counts where the wire has them", got)
	}
	// Issue 24: the whole report goes with the count (RPC mode's
	// streaming usage): message_start's input and cache counts.
	if len(usage) != 2 || usage[0] != (agent.Usage{Input: 12, Output: 1, CacheRead: 3, CacheWrite: 2}) || usage[1].Output != 5 {
		t.Fatalf("usage reports %+v, want message_start's input 12, cache 3+2, output 1, then output 5", usage)
	}
}

// A request carries at most the newest 20 tool-result images, older ones
// leaving 10 at a time as a line of text each, so a session whose tool
// returns a screenshot at every call stays under the API's image limit.
func TestMessages_BoundsToolResultImages(t *testing.T) {
	for total, wantSent := range map[int]int{1: 1, 20: 20, 21: 11, 30: 20, 31: 11, 150: 20} {
		var msgs []agent.Message
		for i := range total {
			id := fmt.Sprintf("toolu_%d", i)
			msgs = append(msgs,
				agent.Message{Role: agent.RoleAssistant, Content: []agent.ContentBlock{{Type: "toolCall", ToolCall: &agent.ToolCall{ID: id, Name: "mcp__b__shot"}}}},
				agent.Message{Role: agent.RoleToolResult, ToolCallID: id, Content: []agent.ContentBlock{{Type: agent.BlockImage, Data: fmt.Sprint(i), MimeType: "image/png"}}})
		}
		var sent []string
		named := 0
		for _, m := range messages(msgs) {
			if m.OfUser == nil {
				continue
			}
			for _, c := range m.OfUser.Content {
				if c.OfToolResult == nil {
					continue
				}
				for _, r := range c.OfToolResult.Content {
					if r.OfImage != nil {
						sent = append(sent, r.OfImage.Source.OfBase64.Data)
					} else if r.OfText != nil && strings.Contains(r.OfText.Text, "no longer sent") {
						named++
					}
				}
			}
		}
		if len(sent) != wantSent || named != total-wantSent || sent[len(sent)-1] != fmt.Sprint(total-1) || sent[0] != fmt.Sprint(total-wantSent) {
			t.Errorf("%d images: sent %v and %d named, want the newest %d sent and the rest named", total, sent, named, wantSent)
		}
	}
}
