package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
)

// starter top lists each sub-agent's prompt right under its parent's
// (a sub-agent's own sub-agents under it), counts the sub-agents in its
// head line, and names the parent of a sub-agent whose parent is not
// listed.
func TestWriteTop_SubAgentsUnderTheirParent(t *testing.T) {
	now := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return now.Add(time.Duration(s-100) * time.Second) }
	job := &agent.JobStatus{Status: agent.JobModel, Since: at(90), Turn: 1}
	jobs := []client.Job{ // oldest first, as client.Jobs lists them
		{SessionID: "p", StartedAt: at(1), Job: job},
		{SessionID: "other", StartedAt: at(2), Job: job},
		{SessionID: "p.task-a", ParentSession: "p", StartedAt: at(3), Job: job},
		{SessionID: "lost.task-x", ParentSession: "lost", StartedAt: at(4), Job: job},
		{SessionID: "p.task-a.task-b", ParentSession: "p.task-a", StartedAt: at(5), Job: job},
		{SessionID: "p.task-c", ParentSession: "p", StartedAt: at(6), Job: job},
	}
	var b strings.Builder
	writeTop(&b, "q", jobs, false, now)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if !strings.HasPrefix(lines[0], "6 running prompts (4 sub-agents) on task queue q") {
		t.Errorf("head line %q", lines[0])
	}
	want := []string{"p ", "└ p.task-a ", "  └ p.task-a.task-b ", "└ p.task-c ", "other ", "lost.task-x (sub-agent of lost) "}
	if len(lines) != 2+len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), 2+len(want), b.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[2+i], w) {
			t.Errorf("row %d %q, want it to start with %q\n%s", i, lines[2+i], w, b.String())
		}
	}
}
