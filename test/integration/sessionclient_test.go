package integration

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/workflows"
)

// The RPC and chat client (client.Session) reads sessions through the
// workers, never from the store: get_messages is the run context of the
// session the worker has (a failed answer dropped before its retry is not
// on the branch); the next prompt takes the model, thinking level, tools
// and approval another terminal gave the session since it was opened
// (issue 23), and a choice this client made and could not write yet
// (the session busy) wins; fork writes the new session with the
// SessionWrite workflow on a worker.
func TestIntegration_SessionClientReadsThroughTheWorkers(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	store, err := session.Open(e.dataDir + "/sessions")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := e.s
	s.Tools.Enabled = []string{"read", "bash"}
	b, err := client.Open(e.k, s, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if msgs, err := b.Messages(ctx); err != nil || len(msgs) != 0 {
		t.Fatalf("no session yet: %v, %v; want no messages and no error", msgs, err)
	}
	user := agent.TextMessage(agent.RoleUser, "question")
	failed := agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonError, ErrorMessage: "503 Service Unavailable"}
	answer := agent.TextMessage(agent.RoleAssistant, "answer")
	now := time.Now().UTC()
	if _, err := store.Append("s1",
		session.Entry{Type: session.TypeMessage, ID: "u", Timestamp: now, Message: &user},
		session.Entry{Type: session.TypeMessage, ID: "e", ParentID: "u", Timestamp: now, Message: &failed},
		session.Entry{Type: session.TypeMessage, ID: "a", ParentID: "u", Timestamp: now, Message: &answer},
	); err != nil {
		t.Fatal(err)
	}
	if msgs, err := b.Messages(ctx); err != nil || len(msgs) != 2 || msgs[0].Text() != "question" || msgs[1].Text() != "answer" {
		t.Fatalf("messages = %+v, %v; want question and answer", msgs, err)
	}

	// Fork: clone through the answer, then a fork before the question.
	if _, err := b.Fork(ctx, "a", true); err != nil {
		t.Fatal(err)
	}
	clone, err := store.Load(b.SessionID())
	if err != nil || len(clone.Entries) != 2 || clone.Entries[1].ID != "a" {
		t.Fatalf("clone %s = %+v, %v; want the branch u, a", b.SessionID(), clone, err)
	}
	if err := b.SwitchSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}
	if text, err := b.Fork(ctx, "u", false); err != nil || text != "question" {
		t.Fatalf("fork before u = %q, %v", text, err)
	}
	if fork, err := store.Load(b.SessionID()); err != nil || len(fork.Entries) != 0 {
		t.Fatalf("fork before the first message = %+v, %v; want an empty session", fork, err)
	}
	if err := b.SwitchSession(ctx, "s1"); err != nil {
		t.Fatal(err)
	}

	// Another terminal: set_model, set_thinking_level, and `starter
	// session set` (the session's own settings beside it).
	if _, err := store.Append("s1",
		session.Entry{Type: session.TypeModelChange, ID: "m", ParentID: "a", Timestamp: now, Provider: "openai", ModelID: "gpt-x"},
		session.Entry{Type: session.TypeThinkingLevelChange, ID: "t", ParentID: "m", Timestamp: now, ThinkingLevel: "high"},
	); err != nil {
		t.Fatal(err)
	}
	if err := store.PutAside("s1", session.SettingsKey, []byte(`{"tools":["read"],"requireApproval":["bash"]}`)); err != nil {
		t.Fatal(err)
	}
	p, err := b.StartPrompt(ctx, "then this")
	if err != nil {
		t.Fatal(err)
	}
	in := startedInput(t, e, p)
	if in.Model.Provider != "openai" || in.Model.Name != "gpt-x" || in.Model.ThinkingLevel != "high" {
		t.Errorf("next prompt's model %s/%s thinking %q, want the session's openai/gpt-x high", in.Model.Provider, in.Model.Name, in.Model.ThinkingLevel)
	}
	if !slices.Equal(in.Tools.Enabled, []string{"read"}) || !slices.Equal(in.Approval.RequireApproval, []string{"bash"}) {
		t.Errorf("next prompt's tools %v approval %v, want the session's [read] and [bash]", in.Tools.Enabled, in.Approval.RequireApproval)
	}
	// The prompt runs, so this choice stays pending in the client, and
	// wins over what the session says.
	if err := b.SetThinkingLevel(ctx, "low"); err != nil {
		t.Fatal(err)
	}
	if info, err := b.Info(ctx); err != nil || info.ThinkingLevel != "low" || info.Model.Name != "gpt-x" {
		t.Errorf("with its own pending thinking level the client runs %+v, %v; want gpt-x with low", info, err)
	}
}

// startedInput is the input a prompt's workflow started with.
func startedInput(t *testing.T, e *env, p client.Prompt) workflows.PromptInput {
	t.Helper()
	it := e.c.GetWorkflowHistory(context.Background(), p.WorkflowID, p.RunID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	ev, err := it.Next()
	if err != nil {
		t.Fatal(err)
	}
	var in workflows.PromptInput
	if err := json.Unmarshal(payloadData(ev.GetWorkflowExecutionStartedEventAttributes().GetInput()), &in); err != nil {
		t.Fatal(err)
	}
	return in
}
