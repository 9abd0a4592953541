package workflows

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
)

// callTokens is what every model call of the shared-budget test costs.
const callTokens = 100

// spendingChildren is a parent with a token budget whose first answer
// starts three sub-agents at once; each would go on calling ls for
// longer than any budget lets it, and every model call costs callTokens.
func spendingChildren(t *testing.T, maxTokens int64) (*subHarness, PromptInput) {
	h := newSubHarness(t)
	var script []string
	for range 40 {
		script = append(script, `tool:ls {}`)
	}
	for _, p := range []string{"one", "two", "three"} {
		h.scripts[p] = append(script, "text:never reached")
	}
	child := h.callModel
	h.callModel = func(ctx context.Context, n int, in activities.CallModelInput) (activities.CallModelResult, error) {
		res, err := child(ctx, n, in)
		if err == nil {
			res.Usage = &agent.Usage{Input: callTokens}
		}
		return res, err
	}
	in := h.taskInput("one", "two", "three")
	in.Budget.MaxTokens = maxTokens
	return h, in
}

// SPEC 17.7: sub-agents started together share what is left of the
// parent's budget (1/n each), so together they spend at most the limit
// plus one model call each, and the parent stops naming its limit. With
// the rule of histories before the change (each child gets the whole
// remainder) the same prompt overshoots by far.
func TestSubAgent_ConcurrentChildrenShareBudget(t *testing.T) {
	const limit = 1000
	t.Run("shared", func(t *testing.T) {
		h, in := spendingChildren(t, limit)
		_, err := h.run(in)
		status, msg := promptStatus(t, err)
		if status != agent.StatusFailed || !strings.HasPrefix(msg, "budget.maxTokens 1000 reached") {
			t.Fatalf("prompt: %s %q, want it stopped by budget.maxTokens 1000", status, msg)
		}
		spent := h.state().Usage.Tokens()
		if spent > limit+3*callTokens {
			t.Fatalf("the prompt and its 3 sub-agents spent %d tokens, want at most %d (the limit and one call per child)", spent, limit+3*callTokens)
		}
		end, ok := lastOf(h.events(), agent.EventPromptEnd)
		if !ok || !strings.Contains(end.ErrorMessage, "budget.maxTokens 1000 reached") {
			t.Fatalf("prompt_end %+v, want it to name budget.maxTokens 1000", end)
		}
		// Issue 39: prompt_end shows the figure the budget compared,
		// the sub-agents' usage included.
		if end.Usage == nil || end.Usage.Tokens() != spent || !strings.Contains(end.ErrorMessage, fmt.Sprintf("spent %d tokens", spent)) {
			t.Fatalf("prompt_end usage %+v, want the %d tokens the budget compared", end.Usage, spent)
		}
		// Each child got a third of the 900 tokens left after the
		// parent's first call and stopped there.
		_, ends := subAgentEvents(h.events())
		if len(ends) != 3 {
			t.Fatalf("%d subagent_end events, want 3", len(ends))
		}
		for _, e := range ends {
			if e.Usage == nil || e.Usage.Tokens() != 3*callTokens {
				t.Errorf("sub-agent %s spent %+v, want %d tokens (its share of 900)", e.SessionID, e.Usage, 3*callTokens)
			}
		}
	})
}
