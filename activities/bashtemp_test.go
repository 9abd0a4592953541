package activities

import (
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
)

// Issue 20 item 7: the full outputs of a session's truncated bash calls
// are kept in a directory of the session's own under
// <workspace>/.durable-agent/tmp, which the bash tool bounds: one
// session's outputs never push out another's, and removing a session's
// outputs is removing its directory.
// Spec 14.3.3.
func TestRunTool_FullOutputsAreKeptPerSession(t *testing.T) {
	bash := call("c1", "bash", `{"command":"seq 1 3000"}`)
	f, ws := toolFixture(t, bash)
	m := agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonToolUse,
		Content: []agent.ContentBlock{{Type: "toolCall", ToolCall: &bash}}}
	if _, err := f.store.Append("s2", session.Entry{Type: session.TypeMessage, ID: "a1", Timestamp: time.Now(), Message: &m}); err != nil {
		t.Fatal(err)
	}
	fullOutput := regexp.MustCompile(`Full output: (\S+)\]`)
	for _, id := range []string{"s1", "s2"} {
		_, err := f.env.ExecuteActivity(RunToolName, RunToolInput{SessionID: id, AssistantEntryID: "a1",
			ToolCallID: "c1", ToolName: "bash", ResultEntryID: "r1", ParentID: "a1", Workspace: ws,
			Tools: agent.Tools{Enabled: []string{"bash"}}})
		if err != nil {
			t.Fatal(err)
		}
		sess, err := f.store.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := sess.Get("r1")
		got := fullOutput.FindStringSubmatch(e.Message.Text())
		if got == nil {
			t.Fatalf("session %s: no full output in %.200q", id, e.Message.Text())
		}
		if want := filepath.Join(ws, ".durable-agent", "tmp", id); filepath.Dir(got[1]) != want {
			t.Fatalf("session %s: full output %s, want it in %s", id, got[1], want)
		}
	}
}
