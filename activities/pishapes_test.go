package activities

import (
	"context"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/llm/scripted"
)

// The stored answer carries the provider's api, the usage with its total
// and its cost at the model's price, and the thinking level reached the
// provider; without a price the cost is 0.
func TestCallModel_ApiUsageCostAndThinkingLevel(t *testing.T) {
	var got llm.Request
	prov := llm.ProviderFunc(func(ctx context.Context, req llm.Request) agent.Message {
		got = req
		m := agent.TextMessage(agent.RoleAssistant, "ok")
		m.StopReason = agent.StopReasonStop
		m.Usage = &agent.Usage{Input: 1000, Output: 2000, CacheRead: 4000}
		return m
	})
	f := newFixture(t, prov)
	in := input("a1")
	in.Model.Provider, in.Model.ThinkingLevel = "anthropic", "medium"
	in.Model.Cost = &agent.ModelCost{Input: 3, Output: 15, CacheRead: 0.3}
	res, err := f.call(t, in)
	if err != nil {
		t.Fatal(err)
	}
	if got.ThinkingLevel != "medium" {
		t.Fatalf("provider got thinking level %q", got.ThinkingLevel)
	}
	sess, err := f.store.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	e, _ := sess.Get("a1")
	m := e.Message
	want := agent.UsageCost{Input: 0.003, Output: 0.03, CacheRead: 0.0012, Total: 0.0342}
	if m.API != "anthropic-messages" || m.Usage.TotalTokens != 7000 || m.Usage.Cost != want || m.Timestamp == 0 {
		t.Fatalf("stored answer: api %q usage %+v timestamp %d", m.API, m.Usage, m.Timestamp)
	}
	if res.Usage == nil || res.Usage.Cost.Total != 0.0342 {
		t.Fatalf("result usage = %+v", res.Usage)
	}

	f = newFixture(t, scripted.New(scripted.Options{}))
	if _, err := f.call(t, input("a1")); err != nil {
		t.Fatal(err)
	}
	sess, _ = f.store.Load("s1")
	e, _ = sess.Get("a1")
	if e.Message.API != "scripted" || e.Message.Usage.Cost != (agent.UsageCost{}) || e.Message.Usage.TotalTokens == 0 {
		t.Fatalf("unpriced answer: api %q usage %+v", e.Message.API, e.Message.Usage)
	}
}

// A bash execution in the session is compacted like the user message a
// model sees.
func TestCompactionItem_BashExecution(t *testing.T) {
	it := CompactionItem("b1", agent.Message{Role: agent.RoleBashExecution, Command: "ls", Output: "x"})
	if it.Role != string(agent.RoleUser) || it.Text != "Ran `ls`\n```\nx\n```" || it.ID != "b1" {
		t.Fatalf("item = %+v", it)
	}
}
