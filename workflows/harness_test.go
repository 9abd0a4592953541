package workflows

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/retry"
)

// harness runs the Prompt workflow on the SDK's test environment (virtual
// time) with the real activities, a session store in a temp dir and the
// scripted model: fakes are for the model provider only.
type harness struct {
	t     *testing.T
	env   *testsuite.TestWorkflowEnvironment
	store *session.Store
	acts  *activities.Activities
	auth  *auth.File
	// calls records every CallModel input, in order (callsMu: the model
	// calls of concurrent sub-agents run at once).
	calls   []activities.CallModelInput
	callsMu sync.Mutex
	// tools records every RunTool input, in order of start.
	tools   []activities.RunToolInput
	toolsMu sync.Mutex
	// workspace is the session's workspace (a temp dir).
	workspace string
	// runTool, when set, runs in place of the real RunTool (the test
	// decides how the call's worker behaves); afterCall, when set, runs
	// after each CallModel with the number of calls so far.
	runTool   func(ctx context.Context, in activities.RunToolInput) (activities.RunToolResult, error)
	afterCall func(n int)
	// callModel, when set, runs in place of the real CallModel with the
	// number of the call (from 1); it may run the real one itself.
	callModel func(ctx context.Context, n int, in activities.CallModelInput) (activities.CallModelResult, error)
	// userBash, when set, runs in place of the real UserBash (bash_test.go).
	userBash func(ctx context.Context, in activities.UserBashInput) (activities.UserBashResult, error)
}

func newHarness(t *testing.T, creds ...auth.Credential) *harness {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	h := &harness{t: t, env: suite.NewTestWorkflowEnvironment()}
	if raceDetector {
		// The SDK fails a workflow task that runs over 1 s as a deadlock.
		// Under the race detector on a loaded machine the huge-message
		// tests' tasks took longer; without it the 1 s bound stands.
		h.env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 15 * time.Second})
	}
	store, err := session.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h.store = store
	h.auth, err = auth.OpenFile(filepath.Join(t.TempDir(), auth.FileName), auth.FileOptions{Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range creds {
		if err := h.auth.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	prov := scripted.New(scripted.Options{Reply: "done"})
	h.acts = &activities.Activities{
		Sessions:          store,
		Provider:          func(string) (llm.Provider, error) { return prov, nil },
		Credentials:       h.auth,
		HeartbeatInterval: 50 * time.Millisecond,
	}
	h.env.RegisterWorkflowWithOptions(Prompt, workflow.RegisterOptions{Name: PromptWorkflowName})
	h.env.RegisterActivityWithOptions(h.recordingCallModel, activity.RegisterOptions{Name: activities.CallModelName})
	h.env.RegisterActivityWithOptions(h.acts.AppendEntries, activity.RegisterOptions{Name: activities.AppendEntriesName})
	h.env.RegisterActivityWithOptions(h.acts.LoadSession, activity.RegisterOptions{Name: activities.LoadSessionName})
	h.env.RegisterActivityWithOptions(h.acts.MarkUsageLimitReached, activity.RegisterOptions{Name: activities.MarkUsageLimitReachedName})
	h.env.RegisterActivityWithOptions(h.recordingRunTool, activity.RegisterOptions{Name: activities.RunToolName})
	h.env.RegisterActivityWithOptions(h.acts.BeginPrompt, activity.RegisterOptions{Name: activities.BeginPromptName})
	h.env.RegisterActivityWithOptions(h.acts.RecordGrant, activity.RegisterOptions{Name: activities.RecordGrantName})
	h.env.RegisterActivityWithOptions(h.acts.RecordEntry, activity.RegisterOptions{Name: activities.RecordEntryName})
	h.env.RegisterActivityWithOptions(h.acts.SessionSettings, activity.RegisterOptions{Name: activities.SessionSettingsName})
	h.acts.Checkpoints = activities.Checkpoints{DataDir: t.TempDir()}
	h.env.RegisterActivityWithOptions(h.acts.Checkpoint, activity.RegisterOptions{Name: activities.CheckpointName})
	h.workspace = t.TempDir()
	h.acts.ToolPolicy = activities.ToolPolicy{Confine: true}
	return h
}

func (h *harness) recordingRunTool(ctx context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
	h.toolsMu.Lock()
	h.tools = append(h.tools, in)
	h.toolsMu.Unlock()
	if h.runTool != nil {
		return h.runTool(ctx, in)
	}
	return h.acts.RunTool(ctx, in)
}

func (h *harness) recordingCallModel(ctx context.Context, in activities.CallModelInput) (activities.CallModelResult, error) {
	h.callsMu.Lock()
	h.calls = append(h.calls, in)
	n := len(h.calls)
	h.callsMu.Unlock()
	var res activities.CallModelResult
	var err error
	if h.callModel != nil {
		res, err = h.callModel(ctx, n, in)
	} else {
		res, err = h.acts.CallModel(ctx, in)
	}
	if h.afterCall != nil {
		h.afterCall(n)
	}
	return res, err
}

// input is a prompt with the default retry settings and a fault script.
func input(faults ...string) PromptInput {
	return PromptInput{
		SessionID: "s1",
		Message:   "fix the bug",
		Model:     activities.ModelRef{Provider: "scripted", Name: "scripted-1", ContextWindow: 200000, Faults: faults},
		Retry:     retry.DefaultSettings(),
	}
}

// run executes the workflow and returns its result and error.
func (h *harness) run(in PromptInput) (PromptResult, error) {
	h.t.Helper()
	h.env.ExecuteWorkflow(PromptWorkflowName, in)
	if !h.env.IsWorkflowCompleted() {
		h.t.Fatal("workflow did not complete")
	}
	var res PromptResult
	err := h.env.GetWorkflowResult(&res)
	return res, err
}

// events reads the events query after the workflow ran, every page.
func (h *harness) events() []agent.Event {
	h.t.Helper()
	evs := []agent.Event{}
	for {
		page := h.eventsPage(lastSeq(evs))
		if len(page) == 0 {
			return evs
		}
		evs = append(evs, page...)
	}
}

// eventsPage is one answer of the events query: the events after seq
// after that fit in a page.
func (h *harness) eventsPage(after int64) []agent.Event {
	h.t.Helper()
	v, err := h.env.QueryWorkflow(agent.QueryEvents, after)
	if err != nil {
		h.t.Fatalf("query events: %v", err)
	}
	var evs []agent.Event
	if err := v.Get(&evs); err != nil {
		h.t.Fatalf("decode events: %v", err)
	}
	return evs
}

func lastSeq(evs []agent.Event) int64 {
	if len(evs) == 0 {
		return 0
	}
	return evs[len(evs)-1].Seq
}

func (h *harness) state() agent.State {
	h.t.Helper()
	v, err := h.env.QueryWorkflow(agent.QueryState)
	if err != nil {
		h.t.Fatalf("query state: %v", err)
	}
	var st agent.State
	if err := v.Get(&st); err != nil {
		h.t.Fatal(err)
	}
	return st
}

// retryEvents keeps only auto_retry_* events, as compact JSON lines
// without seq/time, for exact comparison with the SPEC's shapes.
func retryEvents(t *testing.T, evs []agent.Event) []string {
	t.Helper()
	var out []string
	for _, e := range evs {
		if e.Type != agent.EventAutoRetryStart && e.Type != agent.EventAutoRetryEnd {
			continue
		}
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		delete(m, "seq")
		delete(m, "time")
		b, _ = json.Marshal(m)
		out = append(out, string(b))
	}
	return out
}

func types(evs []agent.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// runEvents is the events of the retry and compaction contract (SPEC
// 1-10): without the loop's turn and message_start events and the user
// message's message_end, whose order TestLoop_* checks.
func runEvents(evs []agent.Event) []agent.Event {
	var out []agent.Event
	for _, e := range evs {
		switch {
		case e.Type == agent.EventTurnStart, e.Type == agent.EventTurnEnd, e.Type == agent.EventMessageStart:
		case e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleUser:
		default:
			out = append(out, e)
		}
	}
	return out
}

func runTypes(evs []agent.Event) []string { return types(runEvents(evs)) }
