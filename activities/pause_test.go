package activities

import (
	"context"
	"sync"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
)

// A paused turn (pause_turn) is continued inside the call: the paused
// answer is kept in the session before the final one and sent back on the
// next request; the workflow's result is the final answer, whose usage is
// the context size (not the paused call's server-tool input).
func TestCallModel_ContinuesAPausedTurn(t *testing.T) {
	var mu sync.Mutex
	var seen [][]agent.Message
	prov := llm.ProviderFunc(func(ctx context.Context, req llm.Request) agent.Message {
		mu.Lock()
		seen = append(seen, req.Messages)
		n := len(seen)
		mu.Unlock()
		if n == 1 {
			m := agent.TextMessage(agent.RoleAssistant, "Searching")
			m.StopReason = agent.StopReasonContinue
			m.Usage = &agent.Usage{Input: 404500, Output: 943}
			return m
		}
		m := agent.TextMessage(agent.RoleAssistant, "Done")
		m.StopReason = agent.StopReasonStop
		m.Usage = &agent.Usage{Input: 1200, Output: 10}
		return m
	})
	f := newFixture(t, prov)
	res, err := f.call(t, input("a1"))
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != agent.StopReasonStop || res.Text != "Done" || res.Usage == nil || res.Usage.Input != 1200 {
		t.Fatalf("result %+v, want the final answer and its usage", res)
	}
	if len(seen) != 2 {
		t.Fatalf("model called %d times, want 2", len(seen))
	}
	last := seen[1][len(seen[1])-1]
	if last.Role != agent.RoleAssistant || last.Text() != "Searching" {
		t.Fatalf("second request ends with %+v, want the paused answer", last)
	}
	sess, _ := f.store.Load("s1")
	final, ok := sess.Get("a1")
	if !ok || final.ParentID != "a1-pause1" {
		t.Fatalf("final entry %+v, want it after the paused one", final)
	}
	paused, ok := sess.Get("a1-pause1")
	if !ok || paused.ParentID != "u1" || paused.Message.StopReason != agent.StopReasonContinue ||
		paused.Message.Usage == nil || paused.Message.Usage.Input != 404500 {
		t.Fatalf("paused entry %+v", paused)
	}
	ctxMsgs := sess.Context("a1")
	if n := len(ctxMsgs); n < 3 || ctxMsgs[n-2].Text() != "Searching" || ctxMsgs[n-1].Text() != "Done" {
		t.Fatalf("run context %+v", ctxMsgs)
	}
}

// A provider that never stops pausing is cut at MaxPauseContinuations:
// the last paused answer stands as a stop.
func TestCallModel_PauseContinuationsAreBounded(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	prov := llm.ProviderFunc(func(ctx context.Context, req llm.Request) agent.Message {
		mu.Lock()
		calls++
		mu.Unlock()
		m := agent.TextMessage(agent.RoleAssistant, "more")
		m.StopReason = agent.StopReasonContinue
		return m
	})
	f := newFixture(t, prov)
	res, err := f.call(t, input("a1"))
	if err != nil || res.StopReason != agent.StopReasonStop {
		t.Fatalf("result %+v %v", res, err)
	}
	if calls != MaxPauseContinuations+1 {
		t.Fatalf("%d calls, want %d", calls, MaxPauseContinuations+1)
	}
}
