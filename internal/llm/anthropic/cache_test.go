package anthropic

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
)

// wireBody is the part of a Messages API request body the cache prefix
// is made of, each element as the bytes sent.
type wireBody struct {
	System   []json.RawMessage `json:"system"`
	Tools    []json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string            `json:"role"`
		Content []json.RawMessage `json:"content"`
	} `json:"messages"`
}

func decodeBody(t *testing.T, body string) wireBody {
	t.Helper()
	var b wireBody
	if err := json.Unmarshal([]byte(body), &b); err != nil {
		t.Fatal(err)
	}
	return b
}

// twoTurns makes the first two requests of a session as the model
// activity does: the second sends the first's messages, the answer (a
// tool call) and its result.
func twoTurns(t *testing.T) (*server, [2]llm.Request) {
	t.Helper()
	calls := 0
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		calls++
		if calls == 1 {
			stream(w, toolUseStream()...)
			return
		}
		stream(w, evStart, evBlockStart, evHello, evEnd)
	})
	req := request()
	req.System = "You are a coding agent.\nToday's date: Monday, 7 December 2026"
	req.Tools = toolSpecs()
	req.Messages = []agent.Message{agent.TextMessage(agent.RoleUser, "fix the build"),
		{Role: agent.RoleAssistant, StopReason: agent.StopReasonStop, Content: []agent.ContentBlock{{Type: "text", Text: "Which build?"}}},
		agent.TextMessage(agent.RoleUser, "go build ./...")}
	first := req
	answer := call(t, s, first)
	if answer.StopReason != agent.StopReasonToolUse {
		t.Fatalf("first answer = %+v", answer)
	}
	second := req
	second.Messages = append(append([]agent.Message{}, req.Messages...), answer)
	for _, b := range answer.Content {
		if b.Type == "toolCall" {
			second.Messages = append(second.Messages, agent.Message{Role: agent.RoleToolResult, ToolCallID: b.ToolCall.ID,
				ToolName: b.ToolCall.Name, Content: []agent.ContentBlock{{Type: "text", Text: "ok"}}})
		}
	}
	call(t, s, second)
	if len(s.bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(s.bodies))
	}
	return s, [2]llm.Request{first, second}
}

const breakpoint = `"cache_control":{"type":"ephemeral"}`

func hasBreakpoint(raw json.RawMessage) bool { return bytes.Contains(raw, []byte(breakpoint)) }

// Issue 39: every request marks the system prompt (tools before it) and
// the last two user messages as cache breakpoints, within the API's 4, so
// the second request's earlier breakpoint is exactly where the first
// request wrote its cache. Before, no request carried cache_control.
func TestComplete_CacheBreakpoints(t *testing.T) {
	s, _ := twoTurns(t)
	for i, body := range s.bodies {
		if n := strings.Count(body, breakpoint); n != 3 {
			t.Fatalf("request %d has %d breakpoints, want 3 (at most 4 allowed): %s", i+1, n, body)
		}
		b := decodeBody(t, body)
		if !hasBreakpoint(b.System[len(b.System)-1]) {
			t.Fatalf("request %d: the system prompt is not a breakpoint: %s", i+1, body)
		}
	}
	first, second := decodeBody(t, s.bodies[0]), decodeBody(t, s.bodies[1])
	wrote := len(first.Messages) - 1 // where the first request wrote its cache
	for i, m := range second.Messages {
		last := m.Content[len(m.Content)-1]
		want := i == wrote || i == len(second.Messages)-1
		if hasBreakpoint(last) != want {
			t.Fatalf("second request, message %d (%s): breakpoint %v, want %v: %s", i, m.Role, !want, want, s.bodies[1])
		}
	}
}

// Issue 39: a prefix that changes between turns defeats the cache. The
// second request of a session repeats the first one's system prompt,
// tools and messages byte for byte (the cache_control markers aside,
// which move with the latest turn and are not part of the cached prefix).
func TestPrefixIsStable(t *testing.T) {
	s, _ := twoTurns(t)
	first, second := decodeBody(t, s.bodies[0]), decodeBody(t, s.bodies[1])
	same := func(what string, a, b json.RawMessage) {
		strip := func(r json.RawMessage) []byte { return bytes.ReplaceAll(r, []byte(","+breakpoint), nil) }
		if !bytes.Equal(strip(a), strip(b)) {
			t.Fatalf("%s changed between the requests:\n%s\n%s", what, a, b)
		}
	}
	if len(first.System) != len(second.System) || len(first.Tools) != len(second.Tools) || len(second.Messages) <= len(first.Messages) {
		t.Fatalf("requests differ in shape:\n%s\n%s", s.bodies[0], s.bodies[1])
	}
	for i := range first.System {
		same("system block", first.System[i], second.System[i])
	}
	for i := range first.Tools {
		same("tool", first.Tools[i], second.Tools[i])
	}
	for i, m := range first.Messages {
		if m.Role != second.Messages[i].Role || len(m.Content) != len(second.Messages[i].Content) {
			t.Fatalf("message %d changed:\n%s\n%s", i, s.bodies[0], s.bodies[1])
		}
		for j := range m.Content {
			same("message block", m.Content[j], second.Messages[i].Content[j])
		}
	}
}
