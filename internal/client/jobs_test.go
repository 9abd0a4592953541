package client

import (
	"strings"
	"testing"

	"github.com/durableagent/durableagent/workflows"
)

// SPEC 17.1 (`starter top` lists a sub-agent under its parent): a
// sub-agent's prompt is linked to the session whose task call started
// it.
func TestLinkSubAgents(t *testing.T) {
	long := strings.Repeat("p", 120)
	longChild := workflows.SubAgentSessionID(long, "r1-001", "call_1")
	cases := []struct {
		name, session, parent string
		want                  string
	}{
		{"child of the parent's prompt", workflows.SubAgentSessionID("par", "r1-001", "call_1"), workflows.WorkflowID("par"), "par"},
		{"child of a long parent's prompt", longChild, workflows.WorkflowID(long), long},
		{"child of another workflow", workflows.SubAgentSessionID("par", "r1-001", "call_1"), workflows.WorkflowID("par") + "-tool-r1-001-call_1", ""},
		{"a prompt's child that is no sub-agent", "other", workflows.WorkflowID("par"), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			jobs := linkSubAgents([]Job{{SessionID: tc.session}}, map[int]string{0: tc.parent})
			if got := jobs[0].ParentSession; got != tc.want {
				t.Fatalf("parent session of %s (parent %s) = %q, want %q", tc.session, tc.parent, got, tc.want)
			}
		})
	}
}
