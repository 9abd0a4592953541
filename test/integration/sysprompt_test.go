package integration

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/proto"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/sysprompt"
	"github.com/durableagent/durableagent/workflows"
)

// seen wraps the worker's providers and records every request they get.
type seen struct {
	mu   sync.Mutex
	reqs []llm.Request
	next llm.Provider
}

func (s *seen) Complete(ctx context.Context, req llm.Request) agent.Message {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	return s.next.Complete(ctx, req)
}

func (s *seen) turnSystems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, r := range s.reqs {
		if r.Purpose != llm.PurposeSummarize {
			out = append(out, r.System)
		}
	}
	return out
}

// Issue 23: a real worker's model calls carry the session's system
// prompt (the workspace, the project's AGENTS.md), the retry of a failed
// call the same one, and the session's second prompt the identical text
// although AGENTS.md changed in between (fixed at the session's start);
// the text never enters Temporal history, the session file records its
// hash, and no secret of the worker's environment is in it.
func TestSystemPrompt_EveryCallOfTheSessionSendsTheOneFromItsStart(t *testing.T) {
	const envSecret = "sk-ant-integration-sysprompt-0123456789"
	t.Setenv("ANTHROPIC_API_KEY", envSecret)
	e := newEnv(t)
	rec := &seen{}
	e.ext = app.Extensions{Activities: func(a *activities.Activities) {
		a.WrapProvider(func(p llm.Provider) llm.Provider { rec.next = p; return rec })
	}}
	e.startWorker()

	ws := t.TempDir()
	if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	agents := filepath.Join(ws, "AGENTS.md")
	if err := os.WriteFile(agents, []byte("RULE-ONE: run go vet before every commit."), 0o644); err != nil {
		t.Fatal(err)
	}
	promptIn := func(msg string, faults ...string) workflows.PromptInput {
		in := client.PromptInput(e.s, "sysprompt", msg)
		in.Workspace, in.Model.Faults = ws, faults
		return in
	}
	first, err := e.k.StartPrompt(context.Background(), promptIn("look around", "503 Service Unavailable"))
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(first); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("first prompt: %+v, %v", res, err)
	}
	if err := os.WriteFile(agents, []byte("RULE-TWO: never run go vet."), 0o644); err != nil {
		t.Fatal(err)
	}
	in := promptIn("and now?")
	in.Agent.AppendSystemPrompt = "APPENDED-LATER"
	second, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(second); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("second prompt: %+v, %v", res, err)
	}

	sys := rec.turnSystems()
	if len(sys) < 3 {
		t.Fatalf("%d model calls, want the failed one, its retry and the second prompt's", len(sys))
	}
	for i, s := range sys {
		if s != sys[0] {
			t.Fatalf("call %d sent another system prompt than call 1:\n%s\n---\n%s", i+1, s, sys[0])
		}
	}
	for _, want := range []string{"Working directory: " + ws, "## " + agents + "\n\nRULE-ONE: run go vet before every commit."} {
		if !strings.Contains(sys[0], want) {
			t.Errorf("the system prompt lacks %q:\n%s", want, sys[0])
		}
	}
	for _, not := range []string{"RULE-TWO", "APPENDED-LATER", envSecret} {
		if strings.Contains(sys[0], not) {
			t.Errorf("the system prompt has %q", not)
		}
	}

	store, err := session.Open(filepath.Join(e.dataDir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	sess, err := store.Load("sysprompt")
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := sess.SystemPrompt(); !ok || r.Hash != sysprompt.Hash(sys[0]) {
		t.Fatalf("session record %+v (ok %v), want the hash of the text sent", r, ok)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, run := range []string{first.GetRunID(), second.GetRunID()} {
		iter := e.c.GetWorkflowHistory(ctx, first.GetID(), run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for iter.HasNext() {
			ev, err := iter.Next()
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := proto.Marshal(ev)
			if bytes.Contains(raw, []byte("RULE-ONE")) || bytes.Contains(raw, []byte("You are a coding agent")) {
				t.Fatalf("history event %d (%s) carries the system prompt's text", ev.GetEventId(), ev.GetEventType())
			}
		}
	}
}
