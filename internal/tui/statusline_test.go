package tui

import (
	"encoding/json"
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
	d.shows("retry", []string{"Retrying (1/3) in 3s… (esc to cancel)", "retry at " + d.m.now().Add(3*time.Second).Local().Format("15:04:05")}, nil)
	d.emit(agent.Event{Type: agent.EventAutoRetryEnd, Success: true, Attempt: 1})
	d.shows("retry succeeded", []string{"Retry succeeded on attempt 1"}, []string{"retry at"})

	// Cache reads and writes are shown beside the tokens (issue 39).
	d.emit(agent.Event{Type: agent.EventUsage, Usage: &agent.Spend{Input: 2000, Output: 500, CacheRead: 12000, CacheWrite: 1000, CostUsd: 0.42},
		Budget: &agent.Budget{Limits: agent.BudgetLimits{MaxCostUsd: 5}}})
	d.shows("budget", []string{"2.5k tokens · cache 12.0k read, 1.0k written · $0.42 of $5.00"}, nil)

	d.emit(agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusCompleted})
	d.advance(time.Minute)
	d.shows("ended: the time stops", []string{"anthropic/claude-sonnet-4-5 · 1m23s · turn 2"}, []string{"Waiting for your approval"})
}

// Issue 25: a prompt's sub-agents show under it: a note when each starts
// (naming its session and how to follow it) and ends, and the stats line
// counts the running ones until they end.
func TestModel_SubAgentsShowUnderTheParent(t *testing.T) {
	d := newLiveDriver(t)
	d.emit(agent.Event{Type: agent.EventAgentStart}, agent.Event{Type: agent.EventTurnStart, Turn: 1})
	d.emit(agent.Event{Type: agent.EventSubAgentStart, ToolCallID: "c1", SessionID: "p.task-c1-1"},
		agent.Event{Type: agent.EventSubAgentStart, ToolCallID: "c2", SessionID: "p.task-c2-2"})
	d.shows("two running", []string{"Sub-agent p.task-c1-1 started for c1 (follow it: starter events --session p.task-c1-1 --follow)",
		"2 sub-agents running (latest p.task-c2-2)"}, nil)
	d.emit(agent.Event{Type: agent.EventSubAgentEnd, ToolCallID: "c1", SessionID: "p.task-c1-1",
		Usage: &agent.Spend{Input: 10, Output: 5}})
	d.shows("one ended", []string{"Sub-agent p.task-c1-1 ended", "sub-agent p.task-c2-2 running"}, []string{"2 sub-agents running"})
	d.emit(agent.Event{Type: agent.EventSubAgentEnd, ToolCallID: "c2", SessionID: "p.task-c2-2"})
	d.shows("none running", []string{"Sub-agent p.task-c2-2 ended"}, []string{"sub-agent p.task-c2-2 running"})
	// Issue 39: prompt_end's usage is the prompt's figure, its
	// sub-agents' and summary calls' included: the line ends with it.
	d.emit(agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusCompleted, Usage: &agent.Spend{Input: 4000, Output: 1000, CostUsd: 0.5}})
	d.shows("ended", []string{"5.0k tokens · $0.50"}, nil)
}

// Issue 23: the status line says what the running prompt waits for: the
// model while a call runs (its message_start came, its message_end not
// yet), the tools while they run, the user while a call waits for
// approval, the backoff while a retry waits; "Working…" only between.
func TestModel_StatusSaysWhatThePromptWaitsFor(t *testing.T) {
	d := newLiveDriver(t)
	step := func(name, want string, events ...agent.Event) {
		t.Helper()
		d.emit(events...)
		if got, esc := d.status(); got != want || esc != agent.SignalAbort && esc != agent.SignalAbortRetry {
			t.Fatalf("%s: status %q (esc %q), want %q", name, got, esc, want)
		}
	}
	call := func(id string) agent.Event {
		return agent.Event{Type: agent.EventMessageStart, EntryID: id, Message: &agent.Message{Role: agent.RoleAssistant, Provider: "anthropic", Model: "claude-sonnet-4-5"}}
	}
	toolStart := func(id, name string) agent.Event {
		return agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: id, ToolName: name, Args: json.RawMessage(`{}`)}
	}
	toolEnd := func(id, name string) agent.Event {
		return agent.Event{Type: agent.EventToolExecutionEnd, ToolCallID: id, ToolName: name,
			ToolResult: &agent.ToolResult{Content: []agent.ContentBlock{{Type: agent.BlockText, Text: "ok"}}}}
	}
	calls := textAnswer("")
	calls.Content = []agent.ContentBlock{
		{Type: agent.BlockToolCall, ToolCall: &agent.ToolCall{ID: "c1", Name: "bash", Arguments: json.RawMessage(`{}`)}},
		{Type: agent.BlockToolCall, ToolCall: &agent.ToolCall{ID: "c2", Name: "read", Arguments: json.RawMessage(`{}`)}},
		{Type: agent.BlockToolCall, ToolCall: &agent.ToolCall{ID: "c3", Name: "grep", Arguments: json.RawMessage(`{}`)}},
	}
	step("started", "Working… (esc to abort)", agent.Event{Type: agent.EventAgentStart})
	step("model call", "Calling anthropic/claude-sonnet-4-5… (esc to abort)", call("e2"))
	step("answer in", "Working… (esc to abort)", answer("e2", calls))
	step("approval", "Waiting for your approval… (esc to abort)", approvalRequest("c1", "bash", `{}`))
	step("one tool", "Running bash… (esc to abort)", toolStart("c1", "bash"))
	step("two tools", "Running bash and read… (esc to abort)", toolStart("c2", "read"))
	step("three tools", "Running bash, read and 1 more… (esc to abort)", toolStart("c3", "grep"))
	step("bash ended", "Running read and grep… (esc to abort)", toolEnd("c1", "bash"))
	step("tools ended", "Working… (esc to abort)", toolEnd("c2", "read"), toolEnd("c3", "grep"))
	step("next call", "Calling anthropic/claude-sonnet-4-5… (esc to abort)", call("e6"))
	failed := textAnswer("")
	failed.StopReason, failed.ErrorMessage = agent.StopReasonError, "overloaded"
	step("backoff", "Retrying (1/3) in 2s… (esc to cancel)", answer("e6", failed),
		agent.Event{Type: agent.EventAutoRetryStart, Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "overloaded"})
	step("retried call", "Calling anthropic/claude-sonnet-4-5… (esc to abort)", agent.Event{Type: agent.EventAgentStart}, call("e7"))
}

// Issue 39 item 3: the stats line is the workflow's figure all along: the
// latest usage_update (one comes after usage no answer shows, such as a
// summary call's, budget or not) plus the answers since.
func TestModel_StatsLineAddsAnswersToTheLatestUsage(t *testing.T) {
	d := newLiveDriver(t)
	d.emit(agent.Event{Type: agent.EventAgentStart}, agent.Event{Type: agent.EventTurnStart, Turn: 1})
	d.emit(agent.Event{Type: agent.EventUsage, Usage: &agent.Spend{Input: 2000, Output: 500, CostUsd: 0.25}})
	ans := textAnswer("Done.")
	ans.Usage = &agent.Usage{Input: 1000, Output: 500, Cost: agent.UsageCost{Total: 0.25}}
	d.emit(answer("e2", ans))
	d.shows("after the answer", []string{"4.0k tokens · $0.50"}, nil)
}
