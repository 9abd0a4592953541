package activities

import (
	"testing"

	"github.com/durableagent/durableagent/agent"
)

// Issue 23: a grep (or find) call's summary in the Temporal Web UI shows
// its pattern, not the directory it searches; bash shows its command.
func TestToolCallRefs_SummaryShowsThePattern(t *testing.T) {
	m := agent.Message{Role: agent.RoleAssistant, Content: []agent.ContentBlock{
		{Type: agent.BlockToolCall, ToolCall: &agent.ToolCall{ID: "c1", Name: "grep", Arguments: []byte(`{"path":"internal","pattern":"func Load"}`)}},
		{Type: agent.BlockToolCall, ToolCall: &agent.ToolCall{ID: "c2", Name: "bash", Arguments: []byte(`{"command":"go test ./..."}`)}},
		{Type: agent.BlockToolCall, ToolCall: &agent.ToolCall{ID: "c3", Name: "read", Arguments: []byte(`{"path":"go.mod"}`)}},
	}}
	refs := ToolCallRefs(m)
	if len(refs) != 3 || refs[0].Summary != "func Load" || refs[1].Summary != "go test ./..." || refs[2].Summary != "go.mod" {
		t.Fatalf("summaries %+v", refs)
	}
}
