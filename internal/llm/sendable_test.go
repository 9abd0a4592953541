package llm

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

func call(id string) agent.ContentBlock {
	return agent.ContentBlock{Type: "toolCall", ToolCall: &agent.ToolCall{ID: id, Name: "bash", Arguments: json.RawMessage(`{}`)}}
}

func answer(stop agent.StopReason, blocks ...agent.ContentBlock) agent.Message {
	return agent.Message{Role: agent.RoleAssistant, StopReason: stop, Content: blocks}
}

func result(id string) agent.Message {
	return agent.Message{Role: agent.RoleToolResult, ToolCallID: id, ToolName: "bash",
		Content: []agent.ContentBlock{{Type: "text", Text: "ok"}}}
}

// shape renders messages as role[:detail] for comparison.
func shape(msgs []agent.Message) string {
	var parts []string
	for _, m := range msgs {
		p := string(m.Role)
		for _, b := range m.Content {
			switch {
			case b.Type == "toolCall":
				p += ":call=" + b.ToolCall.ID
			case m.Role == agent.RoleToolResult:
				p += ":" + m.ToolCallID + "=" + b.Text
			default:
				p += ":" + b.Text
			}
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

// Providers reject a tool call without its result and a session that
// repeats a failed call's cut-off tool calls: what is sent is repaired,
// the session file keeps what happened.
func TestSendableMessages(t *testing.T) {
	user := agent.TextMessage(agent.RoleUser, "go")
	text := agent.ContentBlock{Type: "text", Text: "hm"}
	cases := []struct {
		name string
		in   []agent.Message
		want string
	}{
		{"complete loop unchanged",
			[]agent.Message{user, answer(agent.StopReasonToolUse, call("a"), call("b")), result("a"), result("b"), answer(agent.StopReasonStop, text)},
			"user:go assistant:call=a:call=b toolResult:a=ok toolResult:b=ok assistant:hm"},
		{"empty error answer dropped",
			[]agent.Message{user, answer(agent.StopReasonError)},
			"user:go"},
		{"aborted answer keeps its text, loses its calls",
			[]agent.Message{user, answer(agent.StopReasonAborted, text, call("a"))},
			"user:go assistant:hm"},
		{"error answer with only a cut call dropped",
			[]agent.Message{user, answer(agent.StopReasonError, call("a")), answer(agent.StopReasonStop, text)},
			"user:go assistant:hm"},
		{"orphan call before the next user message gets a result",
			[]agent.Message{user, answer(agent.StopReasonToolUse, call("a"), call("b")), result("a"), agent.TextMessage(agent.RoleUser, "next")},
			"user:go assistant:call=a:call=b toolResult:a=ok toolResult:b=" + NoToolResultText + " user:next"},
		{"orphan calls at the end get results",
			[]agent.Message{user, answer(agent.StopReasonToolUse, call("a"))},
			"user:go assistant:call=a toolResult:a=" + NoToolResultText},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := shape(tc.in)
			if got := shape(SendableMessages(tc.in)); got != tc.want {
				t.Fatalf("sent %s\nwant %s", got, tc.want)
			}
			if shape(tc.in) != before {
				t.Fatal("the input messages were changed")
			}
		})
	}
}
