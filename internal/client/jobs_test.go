package client

import (
	"strings"
	"testing"

	"github.com/durableagent/durableagent/workflows"
)

// SPEC 17.1 (`starter top` lists a sub-agent under its parent): a
// sub-agent's prompt is linked to the session whose task call started
// it, whether its parent is that session's prompt or, in runs from
// before the fold, a SubAgent workflow the listing found.
func TestLinkSubAgents(t *testing.T) {
	long := strings.Repeat("p", 120)
	longChild := workflows.SubAgentSessionID(long, "r1-001", "call_1")
	cases := []struct {
		name, session, parent string
		calledBy              map[string]string
		want                  string
	}{
		{"child of the parent's prompt", workflows.SubAgentSessionID("par", "r1-001", "call_1"), workflows.WorkflowID("par"), nil, "par"},
		{"child of a long parent's prompt", longChild, workflows.WorkflowID(long), nil, long},
		{"child of a SubAgent workflow", workflows.SubAgentSessionID("par", "r1-001", "call_1"), workflows.WorkflowID("par") + "-tool-r1-001-call_1",
			map[string]string{workflows.WorkflowID("par") + "-tool-r1-001-call_1": workflows.WorkflowID("par")}, "par"},
		{"SubAgent workflow not listed", workflows.SubAgentSessionID("par", "r1-001", "call_1"), workflows.WorkflowID("par") + "-tool-r1-001-call_1", nil, ""},
		{"a prompt's child that is no sub-agent", "other", workflows.WorkflowID("par"), nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			jobs := linkSubAgents([]Job{{SessionID: tc.session}}, map[int]string{0: tc.parent}, tc.calledBy)
			if got := jobs[0].ParentSession; got != tc.want {
				t.Fatalf("parent session of %s (parent %s) = %q, want %q", tc.session, tc.parent, got, tc.want)
			}
		})
	}
}
