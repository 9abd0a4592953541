package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/tools"
)

// subHarness is the harness with the SubAgent workflow registered and
// the scripted model answering each sub-agent's session from its own
// script (children: by the text of its prompt, since the session id is
// derived).
type subHarness struct {
	*harness
	mu sync.Mutex
	// scripts maps a sub-agent's prompt to its model's fault script.
	scripts map[string][]string
	// inFlight and maxInFlight count the sub-agents' model calls running
	// at once; hold is how long each one takes (real time).
	inFlight, maxInFlight int
	hold                  time.Duration
	// childTools records the tools each sub-agent session was offered.
	childTools map[string][]string
}

func newSubHarness(t *testing.T) *subHarness {
	h := &subHarness{harness: newHarness(t), scripts: map[string][]string{}, childTools: map[string][]string{}}
	h.env.RegisterWorkflowWithOptions(SubAgent, workflow.RegisterOptions{Name: SubAgentWorkflowName})
	h.env.RegisterActivityWithOptions(h.acts.SubAgentTask, activity.RegisterOptions{Name: activities.SubAgentTaskName})
	h.callModel = func(ctx context.Context, n int, in activities.CallModelInput) (activities.CallModelResult, error) {
		if in.SessionID == "s1" {
			return h.acts.CallModel(ctx, in)
		}
		sess, err := h.store.Load(in.SessionID)
		if err != nil {
			return activities.CallModelResult{}, err
		}
		var prompt string
		for _, e := range sess.Entries {
			if e.Message != nil && e.Message.Role == agent.RoleUser {
				prompt = e.Message.Text()
				break
			}
		}
		h.mu.Lock()
		in.Model.Faults = h.scripts[prompt]
		h.childTools[in.SessionID] = in.Tools
		h.inFlight++
		h.maxInFlight = max(h.maxInFlight, h.inFlight)
		h.mu.Unlock()
		time.Sleep(h.hold)
		res, err := h.acts.CallModel(ctx, in)
		h.mu.Lock()
		h.inFlight--
		h.mu.Unlock()
		return res, err
	}
	return h
}

// taskInput is a prompt with task among its tools whose first answer
// calls task once per prompt, then answers "all done".
func (h *subHarness) taskInput(prompts ...string) PromptInput {
	var calls []map[string]any
	for i, p := range prompts {
		calls = append(calls, map[string]any{"name": tools.Task,
			"arguments": map[string]any{"description": fmt.Sprintf("job %d", i+1), "prompt": p}})
	}
	b, _ := json.Marshal(calls)
	in := h.toolInput("tools:"+string(b), "text:all done")
	in.Tools.Enabled = append(in.Tools.Enabled, tools.Task)
	return in
}

// subAgentEvents returns the subagent_start and subagent_end events.
func subAgentEvents(evs []agent.Event) (starts, ends []agent.Event) {
	for _, e := range evs {
		switch e.Type {
		case agent.EventSubAgentStart:
			starts = append(starts, e)
		case agent.EventSubAgentEnd:
			ends = append(ends, e)
		}
	}
	return starts, ends
}

// toolResultTexts are the tool results of the session s1 up to leaf.
func (h *subHarness) toolResultTexts(leaf string) []string {
	var out []string
	for _, e := range h.branch(leaf) {
		if e.Message != nil && e.Message.Role == agent.RoleToolResult {
			out = append(out, e.Message.Text())
		}
	}
	return out
}

// Issue 25: three task calls in one answer run as three sub-agents at
// once, each an ordinary session of its own (header parentSession, the
// parent's workspace); the parent's tool results are their answers with
// an account, subagent_start/_end name their sessions, and the parent's
// usage includes theirs.
func TestSubAgent_ThreeConcurrentChildren(t *testing.T) {
	h := newSubHarness(t)
	h.hold = 300 * time.Millisecond
	for _, p := range []string{"alpha", "beta", "gamma"} {
		h.scripts[p] = []string{"text:answer " + p}
	}
	res, err := h.run(h.taskInput("alpha", "beta", "gamma"))
	if err != nil || res.Status != agent.StatusCompleted || res.Text != "all done" {
		t.Fatalf("prompt: %+v %v, want it completed", res, err)
	}
	if h.maxInFlight != 3 {
		t.Errorf("%d sub-agents called their model at once, want 3", h.maxInFlight)
	}
	starts, ends := subAgentEvents(h.events())
	if len(starts) != 3 || len(ends) != 3 {
		t.Fatalf("subagent events: %d starts, %d ends, want 3 each", len(starts), len(ends))
	}
	results := h.toolResultTexts(res.LeafID)
	if len(results) != 3 {
		t.Fatalf("tool results %q, want 3", results)
	}
	var childUsage agent.Spend
	for i, p := range []string{"alpha", "beta", "gamma"} {
		sid := starts[i].SessionID
		if ends[i].SessionID != sid || ends[i].ToolCallID != starts[i].ToolCallID || ends[i].IsError || ends[i].Usage == nil || ends[i].Usage.Tokens() == 0 {
			t.Fatalf("subagent_end %+v for start %+v, want the same session, no error, its usage", ends[i], starts[i])
		}
		childUsage = childUsage.Plus(*ends[i].Usage)
		if !strings.HasPrefix(sid, "s1.task-") {
			t.Errorf("sub-agent session %q, want it derived from s1", sid)
		}
		if !strings.HasPrefix(results[i], "answer "+p+"\n\n[sub-agent \"job ") || !strings.Contains(results[i], "session "+sid+": completed after 1 turns and 0 tool calls; usage ") {
			t.Errorf("tool result %d: %q, want the answer of %s and its account", i, results[i], p)
		}
		sess, err := h.store.Load(sid)
		if err != nil {
			t.Fatal(err)
		}
		if sess.Header.ParentSession != "s1" || sess.Header.Cwd != h.workspace {
			t.Errorf("sub-agent header %+v, want parentSession s1 and the parent's workspace", sess.Header)
		}
	}
	st := h.state()
	if res.Usage == nil || st.Usage == nil || *st.Usage != *res.Usage {
		t.Fatalf("usage: result %+v, state %+v, want the same", res.Usage, st.Usage)
	}
	own := res.Usage.Tokens() - childUsage.Tokens()
	if own <= 0 || childUsage.Tokens() <= 0 {
		t.Fatalf("usage %+v, children %+v: want the parent's own calls and its children's both counted", res.Usage, childUsage)
	}
}
