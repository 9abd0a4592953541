package rpcserver_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/rpcserver"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/rpc"
)

// sessionFile writes the entries of session s1 into b's session store.
func sessionFile(t *testing.T, b *client.Session, entries ...session.Entry) {
	t.Helper()
	store, err := session.Open(filepath.Join(b.Settings().DataDir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Init("s1", t.TempDir(), ""); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, err := store.Append("s1", e); err != nil {
			t.Fatal(err)
		}
	}
}

// Issue 22: get_session_stats has the session's usage, a failed attempt
// (left out of the run context) included, beside the run context's
// tokens and cost.
func TestServe_SessionStatsUsageCountsFailedAttempts(t *testing.T) {
	now := time.Now().UTC()
	user := agent.TextMessage(agent.RoleUser, "hi")
	failed := agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonError, ErrorMessage: "stream cut",
		Usage: &agent.Usage{Input: 100, Output: 10, Cost: agent.UsageCost{Total: 0.11}}}
	answer := agent.TextMessage(agent.RoleAssistant, "hello")
	answer.StopReason = agent.StopReasonStop
	answer.Usage = &agent.Usage{Input: 100, Output: 20, CacheRead: 5, Cost: agent.UsageCost{Total: 0.12}}
	b := offline(t)
	sessionFile(t, b,
		session.Entry{Type: session.TypeMessage, ID: "u1", Timestamp: now, Message: &user},
		session.Entry{Type: session.TypeMessage, ID: "a1", ParentID: "u1", Timestamp: now, Message: &failed},
		session.Entry{Type: session.TypeMessage, ID: "a2", ParentID: "u1", Timestamp: now, Message: &answer})
	h := serve(t, &rpcserver.Server{Backend: b})
	h.send(`{"id":"1","type":"get_session_stats"}`)
	st := decode[rpc.SessionStats](t, h.response())
	want := agent.Spend{Input: 200, Output: 30, CacheRead: 5, CostUsd: 0.23}
	if st.Usage != want || st.Tokens.Input != 100 || st.Cost != 0.12 {
		t.Fatalf("stats usage %+v tokens %+v cost %v, want usage %+v and the run context's 100 input tokens, $0.12", st.Usage, st.Tokens, st.Cost, want)
	}
}
