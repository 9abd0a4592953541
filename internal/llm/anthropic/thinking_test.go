package anthropic

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
)

// The thinking level becomes extended thinking with the level's budget,
// max_tokens leaves room beyond it, and off sends no thinking at all.
func TestComplete_ThinkingLevelSetsTheBudget(t *testing.T) {
	for _, tc := range []struct {
		level      string
		maxTokens  int
		wantBudget int
		wantMax    int
	}{
		{"", 0, 0, DefaultMaxTokens},
		{llm.ThinkingOff, 0, 0, DefaultMaxTokens},
		{llm.ThinkingMinimal, 0, 1024, DefaultMaxTokens},
		{llm.ThinkingMedium, 0, 8192, DefaultMaxTokens + 8192},
		{llm.ThinkingHigh, 32000, 16384, 32000},
		// Issue 24: max fills Claude's 64000 output tokens, the answer
		// keeping its default room.
		{llm.ThinkingMax, 0, 55808, 64000},
	} {
		t.Run(tc.level, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				stream(w, evStart, evBlockStart, evHello, evEnd)
			})
			req := request()
			req.ThinkingLevel, req.MaxTokens = tc.level, tc.maxTokens
			if m := call(t, s, req); m.StopReason != agent.StopReasonStop {
				t.Fatalf("answer = %+v", m)
			}
			var body struct {
				MaxTokens int `json:"max_tokens"`
				Thinking  *struct {
					Type         string `json:"type"`
					BudgetTokens int    `json:"budget_tokens"`
				} `json:"thinking"`
			}
			if err := json.Unmarshal([]byte(s.bodies[0]), &body); err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.wantBudget == 0 && body.Thinking != nil:
				t.Fatalf("thinking sent for level %q: %s", tc.level, s.bodies[0])
			case tc.wantBudget > 0 && (body.Thinking == nil || body.Thinking.Type != "enabled" || body.Thinking.BudgetTokens != tc.wantBudget):
				t.Fatalf("thinking = %+v, want enabled with budget %d", body.Thinking, tc.wantBudget)
			case body.MaxTokens != tc.wantMax:
				t.Fatalf("max_tokens = %d, want %d", body.MaxTokens, tc.wantMax)
			}
		})
	}
}

// A thinking block keeps its signature, and goes back to the API with it
// (extended thinking with tools requires that); one without a signature
// is not sent back.
func TestComplete_ThinkingSignatureRoundTrip(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		stream(w, evStart, evThinkingStart(0), evThinking(0, "let me see"),
			evDelta(0, map[string]any{"type": "signature_delta", "signature": "c2ln"}), evStop(0),
			evTextStart(1), evText(1, "done"), evStop(1), evFinish("end_turn"))
	})
	req := request()
	req.ThinkingLevel = llm.ThinkingLow
	m := call(t, s, req)
	if len(m.Content) != 2 || m.Content[0].Type != agent.BlockThinking || m.Content[0].Text != "let me see" || m.Content[0].Signature != "c2ln" {
		t.Fatalf("content = %+v", m.Content)
	}
	unsigned := agent.Message{Role: agent.RoleAssistant, Content: []agent.ContentBlock{{Type: agent.BlockThinking, Text: "no sig"}, {Type: agent.BlockText, Text: "x"}}}
	req.Messages = append(req.Messages, m, agent.TextMessage(agent.RoleUser, "again"), unsigned, agent.TextMessage(agent.RoleUser, "more"))
	call(t, s, req)
	var body struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(s.bodies[1]), &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Messages) != 5 || !jsonEqual(t, body.Messages[1].Content[0], `{"type":"thinking","thinking":"let me see","signature":"c2ln"}`) {
		t.Fatalf("second request = %s", s.bodies[1])
	}
	if n := len(body.Messages[3].Content); n != 1 || !jsonEqual(t, body.Messages[3].Content[0], `{"type":"text","text":"x"}`) {
		t.Fatalf("unsigned thinking was sent back: %s", s.bodies[1])
	}
}

// Images of a user message reach the API as base64 image blocks after
// the text; a bash execution the user ran (as llm.SendableMessages passes
// it on) goes as the user message the terminal agent sends. Both are the last block of one of the last two
// user messages: each carries a cache breakpoint.
func TestComplete_SendsImagesAndBashExecutions(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		stream(w, evStart, evBlockStart, evHello, evEnd)
	})
	req := request()
	exit := 2
	req.Messages = llm.SendableMessages([]agent.Message{
		{Role: agent.RoleBashExecution, Command: "make", Output: "boom", ExitCode: &exit},
		{Role: agent.RoleUser, Content: []agent.ContentBlock{{Type: agent.BlockText, Text: "what is this?"}, {Type: agent.BlockImage, Data: "iVBORw0KGgo=", MimeType: "image/png"}}},
	})
	call(t, s, req)
	var body struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(s.bodies[0]), &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Messages) != 2 || body.Messages[0].Role != "user" || body.Messages[1].Role != "user" {
		t.Fatalf("messages = %s", s.bodies[0])
	}
	if !jsonEqual(t, body.Messages[0].Content[0], `{"type":"text","text":"Ran `+"`make`"+`\n`+"```"+`\nboom\n`+"```"+`\n\nCommand exited with code 2","cache_control":{"type":"ephemeral"}}`) {
		t.Fatalf("bash execution sent as %s", body.Messages[0].Content[0])
	}
	if len(body.Messages[1].Content) != 2 || !jsonEqual(t, body.Messages[1].Content[1], `{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="},"cache_control":{"type":"ephemeral"}}`) {
		t.Fatalf("image sent as %s", s.bodies[0])
	}
}
