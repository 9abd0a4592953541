package tui

import (
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
)

// Issue 23: while a prompt runs, a stats line shows its model, elapsed
// time, turn, tokens and cost (of the budget, once a usage_update brings
// one); the status says when it waits for the user's approval; a retry
// that succeeds says so, as the CLI does.
func TestModel_StatsLineApprovalStatusRetrySucceeded(t *testing.T) {
	d := newLiveDriver(t)
	d.emit(agent.Event{Type: agent.EventAgentStart}, agent.Event{Type: agent.EventTurnStart, Turn: 1})
	d.shows("started", []string{"0s · turn 1 · 0 tokens"}, nil)

	ans := textAnswer("Looking.")
	ans.Provider, ans.Model = "anthropic", "claude-sonnet-4-5"
	ans.Usage = &agent.Usage{Input: 1200, Output: 300, Cost: agent.UsageCost{Total: 0.0123}}
	d.emit(answer("e2", ans), agent.Event{Type: agent.EventTurnStart, Turn: 2})
	d.advance(83 * time.Second)
	d.shows("after an answer", []string{"anthropic/claude-sonnet-4-5 · 1m23s · turn 2 · 1.5k tokens · $0.0123"}, nil)

	d.emit(approvalRequest("call_1", "bash", `{"command":"ls"}`))
	if status, _ := d.status(); status != "Waiting for your approval… (esc to abort)" {
		t.Fatalf("status while the call waits for approval: %q", status)
	}

	d.emit(agent.Event{Type: agent.EventAutoRetryStart, Attempt: 1, MaxAttempts: 3, DelayMs: 3000, ErrorMessage: "overloaded"})
	d.shows("retry", []string{"Retrying (1/3) in 3s… (esc to cancel)"}, nil)
	d.emit(agent.Event{Type: agent.EventAutoRetryEnd, Success: true, Attempt: 1})
	d.shows("retry succeeded", []string{"Retry succeeded on attempt 1"}, nil)

	d.emit(agent.Event{Type: agent.EventUsage, Usage: &agent.Spend{Input: 2000, Output: 500, CostUsd: 0.42},
		Budget: &agent.Budget{Limits: agent.BudgetLimits{MaxCostUsd: 5}}})
	d.shows("budget", []string{"2.5k tokens · $0.42 of $5.00"}, nil)

	d.emit(agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusCompleted})
	d.advance(time.Minute)
	d.shows("ended: the time stops", []string{"anthropic/claude-sonnet-4-5 · 1m23s · turn 2"}, []string{"Waiting for your approval"})
}
