package activities

import (
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/policy"
)

// Issue 22: a grant RecordGrant keeps beside the session reaches every
// later BeginPrompt of the session (once, however often it is recorded);
// another session has none.
func TestRecordGrant_LaterPromptsOfTheSessionGetIt(t *testing.T) {
	f, ws := toolFixture(t)
	f.env.RegisterActivityWithOptions(f.acts.RecordGrant, activityName(RecordGrantName))
	begin := func(session, user string) BeginPromptResult {
		t.Helper()
		v, err := f.env.ExecuteActivity(BeginPromptName, BeginPromptInput{SessionID: session, Workspace: ws,
			UserEntryID: user, Message: "hi", NeedWorkspace: true})
		if err != nil {
			t.Fatal(err)
		}
		var b BeginPromptResult
		if err := v.Get(&b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	if b := begin("g1", "u1"); len(b.Grants) != 0 {
		t.Fatalf("a new session has grants %+v", b.Grants)
	}
	g := policy.Grant{Tool: "bash", Rule: "ask bash", Program: "git"}
	for range 2 {
		if _, err := f.env.ExecuteActivity(RecordGrantName, RecordGrantInput{SessionID: "g1", Grant: g}); err != nil {
			t.Fatal(err)
		}
	}
	if b := begin("g1", "u2"); len(b.Grants) != 1 || b.Grants[0] != g {
		t.Fatalf("later prompt's grants %+v, want [%+v]", b.Grants, g)
	}
	if b := begin("g2", "u1"); len(b.Grants) != 0 {
		t.Fatalf("another session's grants %+v", b.Grants)
	}
}

// Issue 22: the policy sees a bash call's command and another tool's
// path, at most MaxPolicyArgBytes of it, marked when cut.
func TestToolCallRefs_PolicyArg(t *testing.T) {
	long := strings.Repeat("é", MaxPolicyArgBytes) // 2 bytes a rune
	m := agent.Message{Role: agent.RoleAssistant}
	for _, c := range []agent.ToolCall{
		call("c1", "bash", `{"command":"git status","timeout":5}`),
		call("c2", "write", `{"path":"src/a.go","content":"package a"}`),
		call("c3", "bash", `{"command":"`+long+`"}`),
	} {
		m.Content = append(m.Content, agent.ContentBlock{Type: "toolCall", ToolCall: &c})
	}
	refs := ToolCallRefs(m)
	if refs[0].PolicyArg != "git status" || refs[0].PolicyArgCut || refs[1].PolicyArg != "src/a.go" {
		t.Fatalf("refs %+v", refs[:2])
	}
	if r := refs[2]; !r.PolicyArgCut || len(r.PolicyArg) > MaxPolicyArgBytes || !strings.HasPrefix(long, r.PolicyArg) {
		t.Fatalf("long command: cut %t, %d bytes", r.PolicyArgCut, len(r.PolicyArg))
	}
}
