package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
)

// wireBody is the part of a Chat Completions request body the cached
// prefix is made of, each element as the bytes sent.
type wireBody struct {
	Messages       []json.RawMessage `json:"messages"`
	Tools          []json.RawMessage `json:"tools"`
	PromptCacheKey *string           `json:"prompt_cache_key"`
}

// twoTurns sends the first two requests of a session as the model
// activity does (the second: the first's messages, the answer, a tool
// result) through p, and returns the bodies sent.
func twoTurns(t *testing.T, p *Provider, s *server) [2]wireBody {
	t.Helper()
	req := request()
	req.SessionID = "0193a4b2-7c1d-7e8f-9a0b-1c2d3e4f5a6b"
	req.System = "You are a coding agent.\nToday's date: Monday, 7 December 2026"
	req.Tools = toolSpecs()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	answer := p.Complete(ctx, req)
	if answer.StopReason != agent.StopReasonToolUse {
		t.Fatalf("first answer = %+v", answer)
	}
	req.Messages = append(append([]agent.Message{}, req.Messages...), answer,
		agent.Message{Role: agent.RoleToolResult, ToolCallID: "call_1", ToolName: "read", Content: []agent.ContentBlock{{Type: "text", Text: "ok"}}})
	p.Complete(ctx, req)
	var out [2]wireBody
	for i := range out {
		if err := json.Unmarshal([]byte(s.bodies[i]), &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func toolThenText(t *testing.T) *server {
	calls := 0
	return newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if calls++; calls == 1 {
			stream(w, toolStart(0, "call_1", "read"), toolArgs(0, `{"path":"go.mod"}`), finish("tool_calls"), chunkDone)
			return
		}
		stream(w, chunkHel, chunkLo, chunkUse, chunkDone)
	})
}

// Issue 39: OpenAI's own API gets the session id as prompt_cache_key on
// every request of the session (before, none was sent); a compatible
// server, which may refuse a field it does not know, gets none.
func TestComplete_PromptCacheKey(t *testing.T) {
	s := toolThenText(t)
	bodies := twoTurns(t, &Provider{baseURL: s.URL + "/v1", cacheKey: true}, s)
	for i, b := range bodies {
		if b.PromptCacheKey == nil || *b.PromptCacheKey != "0193a4b2-7c1d-7e8f-9a0b-1c2d3e4f5a6b" {
			t.Fatalf("request %d: prompt_cache_key = %v, want the session id: %s", i+1, b.PromptCacheKey, s.bodies[i])
		}
	}
	if !New("").cacheKey || !New("https://api.openai.com/v1").cacheKey {
		t.Fatal("OpenAI's endpoint does not get prompt_cache_key")
	}
	local := toolThenText(t)
	if b := twoTurns(t, New(local.URL+"/v1"), local); b[0].PromptCacheKey != nil {
		t.Fatalf("a compatible server got prompt_cache_key: %s", local.bodies[0])
	}
}

// Issue 39: a prefix that changes between turns defeats the server's
// cache. The second request of a session repeats the first one's tools
// and messages (the system message first) byte for byte.
func TestPrefixIsStable(t *testing.T) {
	s := toolThenText(t)
	b := twoTurns(t, &Provider{baseURL: s.URL + "/v1", cacheKey: true}, s)
	if len(b[0].Tools) != len(b[1].Tools) || len(b[1].Messages) <= len(b[0].Messages) {
		t.Fatalf("requests differ in shape:\n%s\n%s", s.bodies[0], s.bodies[1])
	}
	for i := range b[0].Tools {
		if !bytes.Equal(b[0].Tools[i], b[1].Tools[i]) {
			t.Fatalf("tool %d changed:\n%s\n%s", i, b[0].Tools[i], b[1].Tools[i])
		}
	}
	for i := range b[0].Messages {
		if !bytes.Equal(b[0].Messages[i], b[1].Messages[i]) {
			t.Fatalf("message %d changed:\n%s\n%s", i, b[0].Messages[i], b[1].Messages[i])
		}
	}
}
