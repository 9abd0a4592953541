package client

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/pgstore"
	"github.com/durableagent/durableagent/internal/pgtest"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
)

func loadSettings(t *testing.T, dataDir string) settings.Settings {
	t.Helper()
	t.Setenv(settings.EnvHome, dataDir)
	t.Setenv("HOME", dataDir)
	s, err := settings.Load(settings.LoadOptions{})
	if err != nil {
		t.Fatalf("load settings: %v", err)
	}
	return s
}

// set_auto_compaction persists compaction.enabled in the settings file:
// a later Load (the next prompt, another process) reads it.
func TestSession_SetAutoCompactionPersists(t *testing.T) {
	dir := t.TempDir()
	b, err := Open(&Controller{}, loadSettings(t, dir), "s1")
	if err != nil {
		t.Fatal(err)
	}
	for _, enabled := range []bool{false, true, false} {
		if err := b.SetAutoCompaction(context.Background(), enabled); err != nil {
			t.Fatalf("SetAutoCompaction(%t): %v", enabled, err)
		}
		if got := loadSettings(t, dir).Compaction.Enabled; got != enabled {
			t.Errorf("after SetAutoCompaction(%t) the file says %t", enabled, got)
		}
	}
	if s := loadSettings(t, dir); !s.Retry.Enabled || s.Compaction.KeepRecentTokens != 20000 {
		t.Errorf("other settings changed: %+v", s)
	}
}

// get_messages reads the run context from the session file the worker
// writes: a failed answer dropped before its retry is not on the branch.
func TestSession_MessagesFromSessionFile(t *testing.T) {
	dir := t.TempDir()
	b, err := Open(&Controller{}, loadSettings(t, dir), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if msgs, err := b.Messages(context.Background()); err != nil || len(msgs) != 0 {
		t.Fatalf("no session file: %v, %v; want no messages and no error", msgs, err)
	}
	store, err := session.Open(filepath.Join(dir, "sessions"))
	if err != nil {
		t.Fatal(err)
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
	msgs, err := b.Messages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Text() != "question" || msgs[1].Text() != "answer" {
		t.Errorf("messages = %+v, want question and answer", msgs)
	}
}

// With session.store postgres, get_messages and the session commands read
// the database the workers write, not a file: the RPC process needs no
// shared data dir. A missing session reads as empty; a stored branch as
// its run context; the name and branch settings come from its entries.
func TestSession_ReadsThePostgresStore(t *testing.T) {
	srv := pgtest.Start(t, pgtest.Options{})
	dir := t.TempDir()
	s := loadSettings(t, dir)
	s.Session.Store, s.Session.PostgresURL = settings.SessionStorePostgres, srv.CreateDatabase(t, "sessions")
	b, err := Open(&Controller{}, s, "pg1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	ctx := context.Background()
	if msgs, err := b.Messages(ctx); err != nil || len(msgs) != 0 {
		t.Fatalf("no session yet: %v, %v", msgs, err)
	}
	store, err := pgstore.Open(ctx, s.Session.PostgresURL)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	user := agent.TextMessage(agent.RoleUser, "question")
	answer := agent.TextMessage(agent.RoleAssistant, "answer")
	now := time.Now().UTC()
	if _, err := store.Append("pg1",
		session.Entry{Type: session.TypeMessage, ID: "u", Timestamp: now, Message: &user},
		session.Entry{Type: session.TypeModelChange, ID: "m", ParentID: "u", Timestamp: now, Provider: "openai", ModelID: "gpt-x"},
		session.Entry{Type: session.TypeSessionInfo, ID: "n", ParentID: "m", Timestamp: now, Name: "in postgres"},
		session.Entry{Type: session.TypeMessage, ID: "a", ParentID: "n", Timestamp: now, Message: &answer},
	); err != nil {
		t.Fatal(err)
	}
	msgs, err := b.Messages(ctx)
	if err != nil || len(msgs) != 2 || msgs[0].Text() != "question" || msgs[1].Text() != "answer" {
		t.Fatalf("messages = %+v, %v", msgs, err)
	}
	sess, err := b.LoadSession(ctx, "pg1")
	if err != nil || sess.Name() != "in postgres" || sess.BranchSettings(sess.LeafID()).Model != "gpt-x" {
		t.Fatalf("session = %+v, %v", sess, err)
	}
	// A switch reads the session from the database and takes its model;
	// a file path means nothing there.
	if err := b.SwitchSession(ctx, "pg1"); err != nil {
		t.Fatal(err)
	}
	if in := b.promptInput("next"); in.Model.Provider != "openai" || in.Model.Name != "gpt-x" || in.SessionID != "pg1" {
		t.Fatalf("prompt input model %+v session %s", in.Model, in.SessionID)
	}
	if err := b.SwitchSession(ctx, filepath.Join(dir, "sessions", "pg1.jsonl")); err == nil || !strings.Contains(err.Error(), "sessions live in PostgreSQL") {
		t.Fatalf("switch by file = %v", err)
	}
}

// Issue 23: a chat that opened a session before another terminal changed
// the session's model, thinking level, tools and approval starts its next
// prompt (a follow-up typed as a prompt ends starts one) with the
// session's current choices, not the copy it read when it opened the
// session; a choice this client made and has not written yet wins.
func TestSession_NextPromptTakesTheSessionsCurrentChoices(t *testing.T) {
	dir := t.TempDir()
	store, err := session.Open(filepath.Join(dir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	user := agent.TextMessage(agent.RoleUser, "first")
	now := time.Now().UTC()
	if _, err := store.Append("s1", session.Entry{Type: session.TypeMessage, ID: "u", Timestamp: now, Message: &user}); err != nil {
		t.Fatal(err)
	}
	s := loadSettings(t, dir)
	s.Tools.Enabled = []string{"read", "bash"}
	chat, err := Open(&Controller{}, s, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if in := chat.promptInput("before"); in.Model.Name != s.Model.Name || in.Model.ThinkingLevel == "high" {
		t.Fatalf("before any change the chat runs %+v", in.Model)
	}

	// Another terminal: set_model, set_thinking_level, and `starter
	// session set` (the session's own settings beside it).
	if _, err := store.Append("s1",
		session.Entry{Type: session.TypeModelChange, ID: "m", ParentID: "u", Timestamp: now, Provider: "openai", ModelID: "gpt-x"},
		session.Entry{Type: session.TypeThinkingLevelChange, ID: "t", ParentID: "m", Timestamp: now, ThinkingLevel: "high"},
	); err != nil {
		t.Fatal(err)
	}
	if err := store.PutAside("s1", session.SettingsKey, []byte(`{"tools":["read"],"requireApproval":["bash"]}`)); err != nil {
		t.Fatal(err)
	}
	in := chat.promptInput("then this")
	if in.Model.Provider != "openai" || in.Model.Name != "gpt-x" || in.Model.ThinkingLevel != "high" {
		t.Errorf("next prompt's model %s/%s thinking %q, want the session's openai/gpt-x high", in.Model.Provider, in.Model.Name, in.Model.ThinkingLevel)
	}
	if !slices.Equal(in.Tools.Enabled, []string{"read"}) || !slices.Equal(in.Approval.RequireApproval, []string{"bash"}) {
		t.Errorf("next prompt's tools %v approval %v, want the session's [read] and [bash]", in.Tools.Enabled, in.Approval.RequireApproval)
	}

	// This chat's own choice, not written yet (the session is busy),
	// wins over what the session file says.
	chat.mu.Lock()
	chat.pending["s1"] = append(chat.pending["s1"], session.Entry{Type: session.TypeThinkingLevelChange, ThinkingLevel: "low"})
	chat.mu.Unlock()
	if in := chat.promptInput("mine"); in.Model.ThinkingLevel != "low" || in.Model.Name != "gpt-x" {
		t.Errorf("with its own pending thinking level the chat runs %+v, want gpt-x with low", in.Model)
	}
}
