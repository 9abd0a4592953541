package scripted

import (
	"context"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
)

// The offline model shows what reached it: a thinking block naming the
// thinking level (none when off), and the image types of the last user
// message in its reply.
func TestComplete_ShowsThinkingLevelAndImages(t *testing.T) {
	user := agent.Message{Role: agent.RoleUser, Content: []agent.ContentBlock{{Type: agent.BlockText, Text: "what is it"},
		{Type: agent.BlockImage, Data: "AA==", MimeType: "image/png"}}}
	for _, tc := range []struct {
		level, wantThinking string
	}{
		{"", ""}, {llm.ThinkingOff, ""}, {llm.ThinkingHigh, "Thinking (high) about: what is it"},
	} {
		m := New(Options{}).Complete(context.Background(), llm.Request{Provider: "scripted", Model: "m",
			ThinkingLevel: tc.level, Messages: []agent.Message{user}})
		var thinking string
		for _, b := range m.Content {
			if b.Type == agent.BlockThinking {
				thinking = b.Text
			}
		}
		if thinking != tc.wantThinking || m.Text() != "Scripted reply to: what is it [image/png]" {
			t.Fatalf("level %q: thinking %q, text %q", tc.level, thinking, m.Text())
		}
	}
}
