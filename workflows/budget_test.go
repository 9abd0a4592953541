package workflows

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/session"
)

// spentIn sums the usage of the assistant message_end events: what the
// prompt's model calls reported.
func spentIn(evs []agent.Event) agent.Spend {
	var s agent.Spend
	for _, e := range evs {
		if e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleAssistant && e.Message.Usage != nil {
			s.Add(e.Message.Usage)
		}
	}
	return s
}

// lastOf is the last event of type typ.
func lastOf(evs []agent.Event, typ string) (agent.Event, bool) {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == typ {
			return evs[i], true
		}
	}
	return agent.Event{}, false
}

// checkBudgetStop checks the end of a prompt its budget stopped: failed
// with the limit named in its error and its prompt_end, after a final
// assistant message that says so and is the session's last entry.
func checkBudgetStop(t *testing.T, h *harness, res PromptResult, err error, want string) {
	t.Helper()
	status, msg := promptStatus(t, err)
	if status != agent.StatusFailed || !strings.HasPrefix(msg, want) {
		t.Fatalf("prompt %s %q, want failed with %q", status, msg, want)
	}
	evs := h.events()
	end, _ := lastOf(evs, agent.EventPromptEnd)
	if end.ErrorMessage != msg || evs[len(evs)-1].Type != agent.EventPromptEnd {
		t.Fatalf("prompt_end %+v, want it last naming %q", end, msg)
	}
	sess, lerr := h.store.Load("s1")
	if lerr != nil {
		t.Fatal(lerr)
	}
	last := sess.Entries[len(sess.Entries)-1]
	if last.Message == nil || last.Message.Role != agent.RoleAssistant ||
		!strings.Contains(last.Message.Text(), msg) || !strings.Contains(last.Message.Text(), "follow-up") {
		t.Fatalf("last session entry %+v, want the assistant message naming %q", last.Message, msg)
	}
	if res.LeafID != "" && res.LeafID != last.ID {
		t.Fatalf("leaf %s, want the final message %s", res.LeafID, last.ID)
	}
}

// A token limit reached by the first answer: its tool call runs (it has
// its result), no further model call is made, and the usage in the state
// query and the usage_update event is what the model calls reported.
func TestBudget_MaxTokensStopsAfterTheToolCallsOfTheTurn(t *testing.T) {
	h := newHarness(t)
	in := h.toolInput(`tool:bash {"command":"echo one > one.txt"}`, `tool:bash {"command":"echo two > two.txt"}`, `text:done`)
	in.Budget.MaxTokens = 1
	res, err := h.run(in)
	if len(h.calls) != 1 {
		t.Fatalf("%d model calls, want 1", len(h.calls))
	}
	evs := h.events()
	spent := spentIn(evs)
	if spent.Tokens() < 1 {
		t.Fatalf("the scripted model reported no usage: %+v", spent)
	}
	checkBudgetStop(t, h, res, err, "budget.maxTokens 1 reached: spent "+itoa(spent.Tokens())+" tokens (input+output)")
	if _, err := os.Stat(filepath.Join(h.workspace, "one.txt")); err != nil {
		t.Fatal("the tool call of the answer that reached the limit did not run")
	}
	if _, err := os.Stat(filepath.Join(h.workspace, "two.txt")); err == nil {
		t.Fatal("a model call after the limit ran its tool")
	}
	u, ok := lastOf(evs, agent.EventUsage)
	if !ok || u.Usage == nil || u.Usage.Tokens() != spent.Tokens() || u.Budget == nil || u.Budget.Limits.MaxTokens != 1 {
		t.Fatalf("usage_update %+v, want %d tokens of 1", u, spent.Tokens())
	}
	st := h.state()
	if st.Usage == nil || st.Usage.Input != spent.Input || st.Usage.Output != spent.Output || !st.Usage.Unpriced ||
		st.Budget == nil || !strings.HasPrefix(st.Budget.Reached, "budget.maxTokens 1 reached") {
		t.Fatalf("state usage %+v budget %+v, want %+v unpriced and the limit reached", st.Usage, st.Budget, spent)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// A cost limit counts the configured prices: a prompt stops after the
// turn whose answer reached it, and the user continues the session with
// a raised limit, which proceeds to the answer.
func TestBudget_MaxCostStopsAndARaisedLimitContinues(t *testing.T) {
	h := newHarness(t)
	in := h.toolInput(`tool:bash {"command":"echo one > one.txt"}`, `tool:bash {"command":"echo two > two.txt"}`, `text:done`)
	// One dollar per input or output token: the cost is the token count.
	in.Model.Cost = &agent.ModelCost{Input: 1e6, Output: 1e6}
	// Priced calls: the first costs its tokens; the limit sits just past
	// it, so the second call reaches it.
	probe := newHarness(t)
	pin := probe.toolInput(`tool:bash {"command":"echo one > one.txt"}`)
	pin.Model.Cost = in.Model.Cost
	pin.Agent.MaxTurns = 1
	_, _ = probe.run(pin)
	first := spentIn(probe.events())
	in.Budget.MaxCostUsd = first.CostUsd + 0.5
	res, err := h.run(in)
	if len(h.calls) != 2 {
		t.Fatalf("%d model calls, want 2 (the second reached the limit)", len(h.calls))
	}
	spent := spentIn(h.events())
	if spent.CostUsd != float64(spent.Tokens()) || spent.CostUsd < in.Budget.MaxCostUsd {
		t.Fatalf("spent %+v, want $1 a token and at least %v", spent, in.Budget.MaxCostUsd)
	}
	checkBudgetStop(t, h, res, err, "budget.maxCostUsd "+agent.FormatUsd(in.Budget.MaxCostUsd)+" reached: spent "+agent.FormatUsd(spent.CostUsd))
	if st := h.state(); st.Usage == nil || st.Usage.CostUsd != spent.CostUsd || st.Usage.Unpriced {
		t.Fatalf("state usage %+v, want $%v priced", st.Usage, spent.CostUsd)
	}
	if _, err := os.Stat(filepath.Join(h.workspace, "two.txt")); err != nil {
		t.Fatal("the tool call of the answer that reached the limit did not run")
	}

	// The same session, a new prompt with a raised limit: it proceeds.
	next := newHarness(t)
	next.store, next.acts.Sessions, next.workspace = h.store, h.store, h.workspace
	in2 := next.toolInput(`text:carried on`)
	in2.Model.Cost = in.Model.Cost
	in2.Budget.MaxCostUsd = 1e6
	res2, err := next.run(in2)
	if err != nil || res2.Status != agent.StatusCompleted || res2.Text != "carried on" {
		t.Fatalf("continued prompt %+v %v, want it completed", res2, err)
	}
	if next.calls[0].LeafID == "" {
		t.Fatal("the continued prompt did not go on from the session")
	}
	sess, _ := next.store.Load("s1")
	var sawStop bool
	for _, e := range sess.Entries {
		sawStop = sawStop || e.Message != nil && strings.Contains(e.Message.Text(), "budget.maxCostUsd")
	}
	if !sawStop {
		t.Fatal("the session lost the budget message")
	}
}

// budget.maxDurationMs fires on a durable timer while a tool call runs:
// the call finishes (its file is written after the limit passed), then
// the prompt stops before the next model call.
func TestBudget_MaxDurationLetsTheRunningToolCallFinish(t *testing.T) {
	h := newHarness(t)
	in := h.toolInput(`tool:bash {"command":"sleep 1; echo done > slept.txt"}`, `text:never`)
	in.Budget.MaxDurationMs = 300
	res, err := h.run(in)
	checkBudgetStop(t, h, res, err, "budget.maxDurationMs 300 reached: ran ")
	if b, err := os.ReadFile(filepath.Join(h.workspace, "slept.txt")); err != nil || string(b) != "done\n" {
		t.Fatalf("slept.txt %q %v: the tool call was cut", b, err)
	}
	if len(h.calls) != 1 {
		t.Fatalf("%d model calls, want 1", len(h.calls))
	}
	evs := h.events()
	var ended bool
	for _, e := range evs {
		if e.Type == agent.EventToolExecutionEnd {
			ended = !e.IsError
		}
	}
	if !ended {
		t.Fatalf("the tool call has no successful end: %v", types(evs))
	}
}

// budget.maxDurationMs reached while a retry waits its backoff: the wait
// stops at the deadline (not at the end of the backoff), the chain ends
// naming the limit, and no further attempt is made.
func TestBudget_MaxDurationStopsARetryBackoff(t *testing.T) {
	h := newHarness(t)
	// Default backoff: 2s after the first error, 4s after the second.
	in := input("503 Service Unavailable", "503 Service Unavailable", "503 Service Unavailable", "ok")
	in.Budget.MaxDurationMs = 3000
	start := time.Now()
	res, err := h.run(in)
	if len(h.calls) != 2 {
		t.Fatalf("%d model calls, want 2 (the second backoff was cut)", len(h.calls))
	}
	checkBudgetStop(t, h, res, err, "budget.maxDurationMs 3000 reached: ran 3s")
	evs := h.events()
	end, ok := lastOf(evs, agent.EventAutoRetryEnd)
	if !ok || end.Success || !strings.HasPrefix(end.FinalError, "budget.maxDurationMs 3000 reached") {
		t.Fatalf("auto_retry_end %+v, want it failed naming the limit", end)
	}
	first, last := evs[0].Time, evs[len(evs)-1].Time
	if d := last.Sub(first); d < 2900*time.Millisecond || d >= 4*time.Second {
		t.Fatalf("the prompt took %v of workflow time, want it stopped at the 3s deadline", d)
	}
	if time.Since(start) > 30*time.Second {
		t.Fatal("the test did not run on virtual time")
	}
}

// usageOnError is the scripted model, except that its failed calls report
// usage, as a provider does when a stream breaks after it began.
type usageOnError struct {
	inner llm.Provider
	usage agent.Usage
}

func (p usageOnError) Complete(ctx context.Context, req llm.Request) agent.Message {
	m := p.inner.Complete(ctx, req)
	if m.StopReason == agent.StopReasonError {
		u := p.usage
		m.Usage = &u
	}
	return m
}

// A failed attempt counts: its usage reaches the limit, and the prompt
// stops instead of retrying.
func TestBudget_AFailedAttemptReachesTheLimit(t *testing.T) {
	h := newHarness(t)
	prov := usageOnError{inner: scripted.New(scripted.Options{Reply: "done"}), usage: agent.Usage{Input: 700, Output: 400}}
	h.acts.Provider = func(string) (llm.Provider, error) { return prov, nil }
	in := input("connection reset by peer", "ok")
	in.Budget.MaxTokens = 1000
	res, err := h.run(in)
	if len(h.calls) != 1 {
		t.Fatalf("%d model calls, want 1 (no retry past the budget)", len(h.calls))
	}
	checkBudgetStop(t, h, res, err, "budget.maxTokens 1000 reached: spent 1100 tokens (input+output)")
	evs := h.events()
	if _, ok := lastOf(evs, agent.EventAutoRetryStart); ok {
		t.Fatalf("a retry started: %v", types(evs))
	}
	if end, _ := lastOf(evs, agent.EventAgentEnd); end.WillRetry {
		t.Fatalf("agent_end %+v says a retry follows", end)
	}
	if st := h.state(); st.Usage == nil || st.Usage.Input != 700 || st.Usage.Output != 400 {
		t.Fatalf("state usage %+v, want the failed attempt's 700+400", st.Usage)
	}
}

// Issue 39 item 3: without a budget a failed attempt's usage is on its
// message_end, so a client adding the answers' usage to the latest
// usage_update (none here) has, mid-prompt, the figure the budget would
// compare: the failed attempt included.
func TestBudget_AFailedAttemptShowsOnItsMessageEnd(t *testing.T) {
	h := newHarness(t)
	prov := usageOnError{inner: scripted.New(scripted.Options{Reply: "done"}), usage: agent.Usage{Input: 700, Output: 400}}
	h.acts.Provider = func(string) (llm.Provider, error) { return prov, nil }
	res, err := h.run(input("connection reset by peer", "ok"))
	if err != nil || res.Usage == nil {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	var sum agent.Spend
	for _, e := range h.events() {
		switch {
		case e.Type == agent.EventUsage:
			t.Fatalf("usage_update %+v: every usage is on an answer", e)
		case e.Type == agent.EventMessageEnd && e.Message.Role == agent.RoleAssistant:
			sum.Add(e.Message.Usage)
		}
	}
	if sum.Tokens() != res.Usage.Tokens() || res.Usage.Input < 700 {
		t.Fatalf("the answers' usage adds up to %+v, want the prompt's %+v, the failed attempt's 700+400 included", sum, res.Usage)
	}
}

// Issue 39: prompt_end carries the prompt's usage, cache reads and
// writes with the rest, and its cost by the model's price (before, it
// had no usage).
func TestBudget_PromptEndCarriesUsage(t *testing.T) {
	h := newHarness(t)
	in := input(`usage:{"input":1200,"cacheRead":800,"cacheWrite":100,"output":40} text:Hi.`)
	in.Model.Cost = &agent.ModelCost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}
	if _, err := h.run(in); err != nil {
		t.Fatal(err)
	}
	end, _ := lastOf(h.events(), agent.EventPromptEnd)
	if u := end.Usage; u == nil || u.Input != 1200 || u.CacheRead != 800 || u.CacheWrite != 100 || u.Output != 40 || u.CostUsd != 0.004815 {
		t.Fatalf("prompt_end usage %+v, want 1200 input, 800 cache reads, 100 writes, 40 output, $0.004815", end.Usage)
	}
}

// Attempts without usage count nothing but are counted as unmetered.
func TestBudget_AnAttemptWithoutUsageIsUnmetered(t *testing.T) {
	h := newHarness(t)
	in := input("503 Service Unavailable", "ok")
	in.Budget.MaxTokens = 1 << 40
	if _, err := h.run(in); err != nil {
		t.Fatal(err)
	}
	st := h.state()
	if st.Usage == nil || st.Usage.Unmetered != 1 || st.Usage.Tokens() == 0 {
		t.Fatalf("state usage %+v, want the answer's tokens and 1 unmetered attempt", st.Usage)
	}
}

func TestBudget_BadLimitsAreOneLineErrors(t *testing.T) {
	in := input()
	in.Budget = agent.BudgetLimits{MaxCostUsd: -1, MaxDurationMs: -5}
	err := in.Validate()
	if err == nil || !strings.Contains(err.Error(), "budget.maxCostUsd, budget.maxDurationMs must be >= 0") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v, want one line naming both keys", err)
	}
}

// Issue 39: a budget in dollars on a model without a price refuses to
// start, in one line naming the setting to add (before, the prompt ran
// and its usage said "no price for this model: cost not counted").
func TestBudget_CostLimitNeedsAPrice(t *testing.T) {
	for _, b := range []agent.BudgetLimits{{MaxCostUsd: 5}, {SessionLimits: agent.SessionLimits{SessionMaxCostUsd: 5}}} {
		in := input()
		in.Model.Cost, in.Budget = nil, b
		err := in.Validate()
		if err == nil || !strings.Contains(err.Error(), "add model.prices "+in.Model.Provider+"/"+in.Model.Name+"=input,output") || strings.Contains(err.Error(), "\n") {
			t.Fatalf("budget %+v: error %v, want one line naming model.prices", b, err)
		}
		in.Model.Cost = &agent.ModelCost{Input: 1, Output: 2}
		if err := in.Validate(); err != nil {
			t.Fatalf("priced model: %v", err)
		}
	}
}

// sameSession is a new harness (a new prompt) on h's session.
func sameSession(t *testing.T, h *harness) *harness {
	next := newHarness(t)
	next.store, next.acts.Sessions, next.workspace = h.store, h.store, h.workspace
	return next
}

// Session-wide limits count the session's earlier prompts: a prompt
// stops once the session's total reaches the limit, a prompt started past
// it stops before any model call, and one with a raised limit proceeds.
func TestBudget_SessionLimitsCountEarlierPrompts(t *testing.T) {
	price := &agent.ModelCost{Input: 1e6, Output: 1e6}
	first := newHarness(t)
	in := first.toolInput(`text:first answer`)
	in.Model.Cost = price
	if _, err := first.run(in); err != nil {
		t.Fatal(err)
	}
	before := spentIn(first.events())

	second := sameSession(t, first)
	in = second.toolInput(`tool:bash {"command":"echo x > x.txt"}`, `text:never`)
	in.Model.Cost = price
	in.Budget.SessionMaxCostUsd = before.CostUsd + 1
	res, err := second.run(in)
	if len(second.calls) != 1 {
		t.Fatalf("%d model calls, want 1 (the session reached its limit)", len(second.calls))
	}
	all := before.Plus(spentIn(second.events()))
	checkBudgetStop(t, second, res, err, "budget.session.maxCostUsd "+agent.FormatUsd(in.Budget.SessionMaxCostUsd)+
		" reached: the session spent "+agent.FormatUsd(all.CostUsd))
	if st := second.state(); st.Budget == nil || st.Budget.SessionUsage == nil || st.Budget.SessionUsage.CostUsd != all.CostUsd {
		t.Fatalf("state budget %+v, want the session's $%v", st.Budget, all.CostUsd)
	}

	third := sameSession(t, second)
	in = third.toolInput(`text:never`)
	in.Budget.SessionMaxTokens = all.Tokens()
	res, err = third.run(in)
	if len(third.calls) != 0 {
		t.Fatalf("%d model calls, want none: the session was past its limit", len(third.calls))
	}
	checkBudgetStop(t, third, res, err, "budget.session.maxTokens "+itoa(all.Tokens())+" reached")

	fourth := sameSession(t, third)
	in = fourth.toolInput(`text:raised`)
	in.Budget.SessionMaxTokens = all.Tokens() * 100
	if res, err := fourth.run(in); err != nil || res.Text != "raised" {
		t.Fatalf("prompt with a raised limit: %+v %v", res, err)
	}
}

// A prompt stopped before its first model call still has the event shape
// of a prompt: the agent run, the user message, the final message.
func TestBudget_StopBeforeAnyCallEvents(t *testing.T) {
	h := newHarness(t)
	// A session already past its limit: an earlier prompt spent tokens.
	pre := sameSession(t, h)
	if _, err := pre.run(pre.toolInput(`text:first`)); err != nil {
		t.Fatal(err)
	}
	in := h.toolInput(`text:never`)
	in.Budget = agent.BudgetLimits{SessionLimits: agent.SessionLimits{SessionMaxTokens: 1}}
	_, err := h.run(in)
	if status, _ := promptStatus(t, err); status != agent.StatusFailed || len(h.calls) != 0 {
		t.Fatalf("status %s after %d calls, want failed before any", status, len(h.calls))
	}
	got := strings.Join(types(h.events()), " ")
	want := "agent_start message_start message_end message_start message_end agent_end prompt_end"
	if got != want {
		t.Fatalf("events %s\nwant   %s", got, want)
	}
}

// A prompt that continues as new carries its usage and its start: the
// next run counts on from what the first spent, and its deadline is the
// first run's.
func TestBudget_CarriedAcrossContinueAsNew(t *testing.T) {
	h := newHarness(t)
	in := h.toolInput(`tool:bash {"command":"echo one > one.txt"}`, `tool:bash {"command":"echo two > two.txt"}`, `text:never`)
	in.Agent.ContinueAsNewEvents = 20
	in.Budget.MaxDurationMs = 3_600_000
	h.env.SetCurrentHistoryLength(25)
	next := h.continued(in)
	first := spentIn(h.events())
	c := next.Continued
	if c == nil || c.Spent == nil || c.Spent.Tokens() != first.Tokens() || c.StartedMs == 0 {
		t.Fatalf("carried %+v, want the first run's %d tokens and its start", c, first.Tokens())
	}
	deadline := h.state().Budget.Deadline

	h2 := sameSession(t, h)
	next.Budget.MaxTokens = first.Tokens() + 1
	res, err := h2.run(next)
	all := first.Plus(spentIn(h2.events()))
	checkBudgetStop(t, h2, res, err, "budget.maxTokens "+itoa(first.Tokens()+1)+" reached: spent "+itoa(all.Tokens())+" tokens")
	st := h2.state()
	if st.Usage.Tokens() != all.Tokens() || st.Budget.Deadline == nil || !st.Budget.Deadline.Equal(*deadline) {
		t.Fatalf("continued run usage %+v deadline %v, want %d tokens and the first run's deadline %v", st.Usage, st.Budget.Deadline, all.Tokens(), deadline)
	}
}

// budget.maxDurationMs reached while a call waits for an approval that
// has no timeout: the wait ends at the deadline, the call gets a result
// naming the limit without running, and the prompt stops there, its
// prompt_end naming the limit (issue 22: nobody is there to approve).
func TestBudget_MaxDurationEndsAnApprovalWait(t *testing.T) {
	h := newHarness(t)
	in := h.policyInput([]string{"ask write path:*.conf"}, 0,
		`tool:write {"path":"app.conf","content":"x"}`, `text:never`)
	in.Budget.MaxDurationMs = 60_000
	res, err := h.run(in)
	checkBudgetStop(t, h, res, err, "budget.maxDurationMs 60000 reached: ran 1m0s")
	want := "!write: Tool call not run: budget.maxDurationMs 60000 reached: ran 1m0s while it waited for approval"
	sess, lerr := h.store.Load("s1")
	if lerr != nil {
		t.Fatal(lerr)
	}
	if got := h.toolResultTexts(sess.Entries[len(sess.Entries)-1].ID); len(got) != 1 || got[0] != want {
		t.Fatalf("tool results %q, want %q", got, want)
	}
	if len(h.calls) != 1 || exists(h.workspace, "app.conf") {
		t.Fatalf("%d model calls, app.conf written %v: want 1 and no write", len(h.calls), exists(h.workspace, "app.conf"))
	}
	evs := h.events()
	if d := evs[len(evs)-1].Time.Sub(evs[0].Time); d < 59*time.Second || d > 61*time.Second {
		t.Fatalf("the prompt took %v of workflow time, want it stopped at the 60s deadline", d)
	}
}

// Issue 22: a compaction's summary call is spent like any model call: the
// threshold compaction after the answer (the scripted summary reports its
// usage) adds to the prompt's usage, and a token limit the answer alone
// did not reach is reached by it (usage_update says so).
func TestBudget_SummaryCallsAreCounted(t *testing.T) {
	h := newCompactHarness(t)
	seedHistory(t, h.store)
	sessionSpent := func() agent.Spend {
		sess, err := h.store.Load("s1")
		if err != nil {
			t.Fatal(err)
		}
		s, _ := session.Spent(sess)
		return s
	}
	seeded := sessionSpent()
	in := compactInput()
	in.Model.ContextWindow = 475 // the answer's 404 tokens are one above the threshold
	in.Budget.MaxTokens = 405
	res, err := h.run(in)
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	evs := h.events()
	answer := spentIn(evs)
	if _, ok := findEvent(evs, agent.EventAutoCompactionStart); !ok || len(h.sums) != 1 {
		t.Fatalf("no threshold compaction (%d summaries): %v", len(h.sums), types(evs))
	}
	if answer.Tokens() >= 405 {
		t.Fatalf("the answer alone spent %d tokens: the test needs it under the limit", answer.Tokens())
	}
	st := h.state()
	if st.Usage == nil || st.Usage.Tokens() <= answer.Tokens() {
		t.Fatalf("state usage %+v, want more than the answer's %d tokens (the summary call's added)", st.Usage, answer.Tokens())
	}
	u, ok := lastOf(evs, agent.EventUsage)
	if !ok || u.Usage.Tokens() != st.Usage.Tokens() || u.Budget == nil || !strings.HasPrefix(u.Budget.Reached, "budget.maxTokens 405 reached") {
		t.Fatalf("last usage_update %+v, want %d tokens and the limit reached by the summary", u, st.Usage.Tokens())
	}
	if end, _ := lastOf(evs, agent.EventPromptEnd); end.Usage == nil || *end.Usage != *st.Usage || *res.Usage != *st.Usage {
		t.Fatalf("prompt_end usage %+v, result %+v: want the state's %+v (issue 39: one figure)", end.Usage, res.Usage, st.Usage)
	}
	// The session's figure (starter sessions, the next prompt's
	// budget.session.*) counts the summary call too.
	if added := sessionSpent().Tokens() - seeded.Tokens(); added != st.Usage.Tokens() {
		t.Fatalf("the session's figure grew by %d tokens, want the prompt's %d", added, st.Usage.Tokens())
	}
}

// billedThenFails is the scripted model, except that its first call
// reports usage as its stream starts (as Anthropic's message_start does)
// and then fails with a message that carries none, as the providers
// build a failed call's message.
type billedThenFails struct{}

func (billedThenFails) Complete(ctx context.Context, req llm.Request) agent.Message {
	if req.Attempt > 0 {
		return scripted.New(scripted.Options{Reply: "done"}).Complete(ctx, req)
	}
	req.Emit(llm.Delta{Usage: &agent.Usage{Input: 900}})
	req.Emit(llm.Delta{Usage: &agent.Usage{Output: 30}}) // a later report may leave input out
	return llm.ErrorMessage(req, "stream error: connection reset by peer")
}

// Issue 39: a call that failed after its stream reported usage was
// billed: the budget counts that usage (it stops instead of retrying) and
// message_end shows it (before, the attempt was unmetered and retried).
// TestIntegration_AnAbortedCallKeepsTheUsageItWasBilled covers an abort.
func TestBudget_UsageReportedBeforeAFailureCounts(t *testing.T) {
	h := newHarness(t)
	h.acts.Provider = func(string) (llm.Provider, error) { return billedThenFails{}, nil }
	in := input()
	in.Budget.MaxTokens = 930
	res, err := h.run(in)
	checkBudgetStop(t, h, res, err, "budget.maxTokens 930 reached: spent 930 tokens")
	if st := h.state(); st.Usage == nil || st.Usage.Input != 900 || st.Usage.Output != 30 || st.Usage.Unmetered != 0 {
		t.Fatalf("state usage %+v, want the 900+30 reported before the call failed", st.Usage)
	}
	if s := spentIn(h.events()); s.Tokens() != 930 {
		t.Fatalf("message_end usage %+v, want 930 tokens", s)
	}
}

// Issue 39: a paused turn (pause_turn, continued inside one CallModel) is
// billed for every answer: the budget counts the paused one's usage too,
// as the session file does (before, only the last answer's counted).
func TestBudget_APausedTurnCountsEveryAnswer(t *testing.T) {
	h := newHarness(t)
	h.acts.Provider = func(string) (llm.Provider, error) {
		return llm.ProviderFunc(func(ctx context.Context, req llm.Request) agent.Message {
			m := agent.TextMessage(agent.RoleAssistant, "Done")
			m.StopReason, m.Usage = agent.StopReasonStop, &agent.Usage{Input: 100, Output: 10}
			if req.Messages[len(req.Messages)-1].Role == agent.RoleUser {
				m = agent.TextMessage(agent.RoleAssistant, "Searching")
				m.StopReason, m.Usage = agent.StopReasonContinue, &agent.Usage{Input: 5000, Output: 50}
			}
			return m
		}), nil
	}
	in := input()
	in.Budget.MaxTokens = 1 << 40
	res, err := h.run(in)
	if err != nil || res.Text != "Done" {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if st := h.state(); st.Usage == nil || st.Usage.Input != 5100 || st.Usage.Output != 60 {
		t.Fatalf("state usage %+v, want both answers' 5100+60", st.Usage)
	}
}
