package integration

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	temporal "go.temporal.io/sdk/client"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/workflows"
)

// hookedClient runs after once, the first time its session workflow id
// is described or started through it (the moment a check-then-act writer
// has checked, or a workflow writer has started).
type hookedClient struct {
	temporal.Client
	once  sync.Once
	after func()
}

func (c *hookedClient) DescribeWorkflowExecution(ctx context.Context, id, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	d, err := c.Client.DescribeWorkflowExecution(ctx, id, runID)
	c.once.Do(c.after)
	return d, err
}

func (c *hookedClient) ExecuteWorkflow(ctx context.Context, opts temporal.StartWorkflowOptions, wf any, args ...any) (temporal.WorkflowRun, error) {
	run, err := c.Client.ExecuteWorkflow(ctx, opts, wf, args...)
	c.once.Do(c.after)
	return run, err
}

// promptIn is a prompt of session id with the scripted model's faults.
func promptIn(e *env, id string, faults ...string) workflows.PromptInput {
	in := client.PromptInput(e.s, id, "fix the bug")
	in.Model.Faults = faults
	return in
}

// Issue 21 item 3: a session entry written from outside a prompt
// (set_session_name, set_model, set_thinking_level) never interleaves
// with a prompt another client starts. Client B writes a name while
// client A starts a prompt at the worst moment (right after B's first
// call to Temporal): A's prompt is either refused as busy (B's write
// holds the session) or B's entry lands whole before or after it, on
// the branch the prompt continues.
func TestIntegration_SessionWriteNeverInterleavesWithAnotherClientsPrompt(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	const id = "two-clients"
	if _, err := e.result(e.prompt(id)); err != nil { // the session gets its file
		t.Fatal(err)
	}
	store, err := session.Open(e.dataDir + "/sessions")
	if err != nil {
		t.Fatal(err)
	}
	entries := func() int {
		sess, err := store.Load(id)
		if err != nil {
			t.Fatal(err)
		}
		return len(sess.Entries)
	}
	before := entries()

	var runA temporal.WorkflowRun
	var startErr error
	hc := &hookedClient{Client: e.c}
	hc.after = func() {
		// Client A starts a prompt whose first answer fails and is
		// retried (500 ms backoff), and waits until it has written.
		runA, startErr = e.k.StartPrompt(context.Background(), promptIn(e, id, e503))
		if startErr != nil {
			return
		}
		deadline := time.Now().Add(30 * time.Second)
		for entries() == before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
	}
	kb := &client.Controller{Client: hc, TaskQueue: e.s.Temporal.TaskQueue}
	b, err := client.Open(kb, e.s, id)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := b.SetSessionName(ctx, "named by B"); err != nil {
		t.Fatal(err)
	}
	switch {
	case errors.Is(startErr, client.ErrSessionBusy):
		// Refused with a clear error while B's write held the session:
		// A starts again once it is done.
		runA, startErr = e.k.StartPrompt(ctx, promptIn(e, id, e503))
	case startErr != nil:
		t.Fatalf("client A's prompt: %v, want success or %v", startErr, client.ErrSessionBusy)
	}
	if startErr != nil {
		t.Fatalf("client A's prompt after B's write: %v", startErr)
	}
	if _, err := e.result(runA); err != nil {
		t.Fatal(err)
	}
	if _, err := b.State(ctx); err != nil { // writes what waited for the prompt
		t.Fatal(err)
	}
	sess, err := store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	// A failed answer and its retry are siblings; every other entry,
	// B's name included, must be on the branch the prompt ended on.
	onBranch := false
	for _, en := range sess.Branch(sess.LeafID()) {
		onBranch = onBranch || en.Type == session.TypeSessionInfo
	}
	if !onBranch {
		for _, en := range sess.Entries {
			t.Logf("entry %s parent %s type %s", en.ID, en.ParentID, en.Type)
		}
		t.Fatal("B's session_info entry is off the prompt's branch: the write interleaved with the prompt")
	}
	if sess.Name() != "named by B" {
		t.Fatalf("name = %q, want B's", sess.Name())
	}
	// A write on an idle session is its latest workflow: like a user
	// command it ends its events with prompt_end, and a follower ends.
	if err := b.SetSessionName(ctx, "renamed"); err != nil {
		t.Fatal(err)
	}
	if evs := e.events(id); typesOf(evs) != agent.EventPromptEnd || evs[0].Status != agent.StatusCompleted {
		t.Fatalf("events of the write = %+v", evs)
	}
	if end, err := b.Follow(ctx, "", 0, func(agent.Event) {}); err != nil || end.Type != agent.EventPromptEnd {
		t.Fatalf("follow after the write = %+v, %v", end, err)
	}
	if sess, err := store.Load(id); err != nil || sess.Name() != "renamed" {
		t.Fatalf("after the idle write: %v, %v", sess, err)
	}
}

// With no worker up a session write does not hang its command: it is
// durable, the command returns, a prompt started meanwhile is refused as
// busy naming the write, and the entry lands once a worker comes.
func TestIntegration_SessionWriteWithoutWorkerLandsLater(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	const id = "no-worker-write"
	if _, err := e.result(e.prompt(id)); err != nil {
		t.Fatal(err)
	}
	e.stopWorker()
	b, err := client.Open(e.k, e.s, id)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.SetSessionName(ctx, "later"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.StartPrompt(ctx, "hi"); !errors.Is(err, client.ErrSessionBusy) || !strings.Contains(err.Error(), "a session write") {
		t.Fatalf("prompt while the write waits for a worker: %v", err)
	}
	e.startWorker()
	store, err := session.Open(e.dataDir + "/sessions")
	if err != nil {
		t.Fatal(err)
	}
	for sess, _ := store.Load(id); sess.Name() != "later"; sess, _ = store.Load(id) {
		if ctx.Err() != nil {
			t.Fatal("the write never landed")
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The write's history is the SessionWrite workflow's replay fixture
	// (regenerate with UPDATE_REPLAY_HISTORY=1 and -run
	// SessionWriteWithoutWorker).
	desc, err := e.c.DescribeWorkflowExecution(ctx, workflows.WorkflowID(id), "")
	if err != nil || desc.GetWorkflowExecutionInfo().GetType().GetName() != workflows.SessionWriteWorkflowName {
		t.Fatalf("latest run of the session: %v %v", desc, err)
	}
	for desc.GetWorkflowExecutionInfo().GetCloseTime() == nil {
		if ctx.Err() != nil {
			t.Fatal("the write never closed")
		}
		time.Sleep(50 * time.Millisecond)
		if desc, err = e.c.DescribeWorkflowExecution(ctx, workflows.WorkflowID(id), ""); err != nil {
			t.Fatal(err)
		}
	}
	exportAndReplay(t, e, workflows.WorkflowID(id), desc.GetWorkflowExecutionInfo().GetExecution().GetRunId(),
		filepath.Join("..", "..", "workflows", "testdata", "session_write_history.json"))
}
