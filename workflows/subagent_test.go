package workflows

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/tools"
)

// subHarness is the harness with the SubAgentTask activity registered and
// the scripted model answering each sub-agent's session from its own
// script (children: by the text of its prompt, since the session id is
// derived).
type subHarness struct {
	*harness
	mu sync.Mutex
	// scripts maps a sub-agent's prompt to its model's fault script.
	scripts map[string][]string
	// inFlight and maxInFlight count the sub-agents' model calls running
	// at once; hold is how long each one takes (real time).
	inFlight, maxInFlight int
	hold                  time.Duration
	// gather, when set (gatherCalls), is how many sub-agents' model
	// calls must have been in flight at once before any of them goes on;
	// gathered is closed then, and the call that completed the count
	// runs onGathered on the test environment's loop first.
	gather      int
	wasGathered bool
	gathered    chan struct{}
	gatherOnce  sync.Once
	onGathered  func()
	// childTools records the tools each sub-agent session was offered.
	childTools map[string][]string
}

func newSubHarness(t *testing.T) *subHarness {
	h := &subHarness{harness: newHarness(t), scripts: map[string][]string{}, childTools: map[string][]string{}}
	h.env.RegisterActivityWithOptions(h.acts.SubAgentTask, activity.RegisterOptions{Name: activities.SubAgentTaskName})
	h.callModel = func(ctx context.Context, n int, in activities.CallModelInput) (activities.CallModelResult, error) {
		if in.SessionID == "s1" {
			return h.acts.CallModel(ctx, in)
		}
		sess, err := h.store.Load(in.SessionID)
		if err != nil {
			return activities.CallModelResult{}, err
		}
		var prompt string
		for _, e := range sess.Entries {
			if e.Message != nil && e.Message.Role == agent.RoleUser {
				prompt = e.Message.Text()
				break
			}
		}
		h.mu.Lock()
		in.Model.Faults = h.scripts[prompt]
		h.childTools[in.SessionID] = in.Tools
		h.inFlight++
		h.maxInFlight = max(h.maxInFlight, h.inFlight)
		completes := h.gather > 0 && !h.wasGathered && h.inFlight == h.gather
		h.wasGathered = h.wasGathered || completes
		h.mu.Unlock()
		defer func() {
			h.mu.Lock()
			h.inFlight--
			h.mu.Unlock()
		}()
		if err := h.awaitGathered(ctx, completes); err != nil {
			return activities.CallModelResult{}, err
		}
		time.Sleep(h.hold)
		return h.acts.CallModel(ctx, in)
	}
	return h
}

// gatherCalls makes the sub-agents' model calls wait until n of them
// are in flight at once, then runs onGathered (if set) on the test
// environment's loop from inside the call that made n, before any goes
// on. A fixed hold or a virtual-time callback cannot promise "at once":
// the SDK's test environment fires timers by wall time while activities
// run, and under -race on a loaded machine the children's first
// activities outlast either (during_test.go). Calls that never gather
// go on after gatherWait (running onGathered then), so a test of
// concurrency fails on its count instead of hanging.
func (h *subHarness) gatherCalls(n int, onGathered func()) {
	h.gather, h.gathered, h.onGathered = n, make(chan struct{}), onGathered
	h.env.SetTestTimeout(gatherWait + 10*time.Second)
}

// gatherWait bounds how long a sub-agent's model call waits for the
// others of gatherCalls.
const gatherWait = 20 * time.Second

// awaitGathered is gatherCalls' wait in a sub-agent's model call;
// completes says this call made the count.
func (h *subHarness) awaitGathered(ctx context.Context, completes bool) error {
	if h.gather == 0 {
		return nil
	}
	if !completes {
		select {
		case <-h.gathered:
			return nil
		case <-ctx.Done():
			return nil
		case <-time.After(gatherWait):
		}
	}
	var err error
	h.gatherOnce.Do(func() {
		if h.onGathered != nil {
			err = h.onLoop(ctx, fmt.Sprintf("the callback once %d sub-agents call their model", h.gather), h.onGathered)
		}
		close(h.gathered)
	})
	return err
}

// taskInput is a prompt with task among its tools whose first answer
// calls task once per prompt, then answers "all done".
func (h *subHarness) taskInput(prompts ...string) PromptInput {
	var calls []map[string]any
	for i, p := range prompts {
		calls = append(calls, map[string]any{"name": tools.Task,
			"arguments": map[string]any{"description": fmt.Sprintf("job %d", i+1), "prompt": p}})
	}
	b, _ := json.Marshal(calls)
	in := h.toolInput("tools:"+string(b), "text:all done")
	in.Tools.Enabled = append(in.Tools.Enabled, tools.Task)
	return in
}

// subAgentEvents returns the subagent_start and subagent_end events.
func subAgentEvents(evs []agent.Event) (starts, ends []agent.Event) {
	for _, e := range evs {
		switch e.Type {
		case agent.EventSubAgentStart:
			starts = append(starts, e)
		case agent.EventSubAgentEnd:
			ends = append(ends, e)
		}
	}
	return starts, ends
}

// toolResultTexts are the tool results of the session s1 up to leaf.
func (h *subHarness) toolResultTexts(leaf string) []string {
	var out []string
	for _, e := range h.branch(leaf) {
		if e.Message != nil && e.Message.Role == agent.RoleToolResult {
			out = append(out, e.Message.Text())
		}
	}
	return out
}

// Issue 25: three task calls in one answer run as three sub-agents at
// once, each an ordinary session of its own (header parentSession, the
// parent's workspace); the parent's tool results are their answers with
// an account, subagent_start/_end name their sessions, and the parent's
// usage includes theirs.
func TestSubAgent_ThreeConcurrentChildren(t *testing.T) {
	h := newSubHarness(t)
	h.gatherCalls(3, nil)
	for _, p := range []string{"alpha", "beta", "gamma"} {
		h.scripts[p] = []string{"text:answer " + p}
	}
	res, err := h.run(h.taskInput("alpha", "beta", "gamma"))
	if err != nil || res.Status != agent.StatusCompleted || res.Text != "all done" {
		t.Fatalf("prompt: %+v %v, want it completed", res, err)
	}
	if h.maxInFlight != 3 {
		t.Errorf("%d sub-agents called their model at once, want 3", h.maxInFlight)
	}
	starts, ends := subAgentEvents(h.events())
	if len(starts) != 3 || len(ends) != 3 {
		t.Fatalf("subagent events: %d starts, %d ends, want 3 each", len(starts), len(ends))
	}
	results := h.toolResultTexts(res.LeafID)
	if len(results) != 3 {
		t.Fatalf("tool results %q, want 3", results)
	}
	var childUsage agent.Spend
	for i, p := range []string{"alpha", "beta", "gamma"} {
		sid := starts[i].SessionID
		if ends[i].SessionID != sid || ends[i].ToolCallID != starts[i].ToolCallID || ends[i].IsError || ends[i].Usage == nil || ends[i].Usage.Tokens() == 0 {
			t.Fatalf("subagent_end %+v for start %+v, want the same session, no error, its usage", ends[i], starts[i])
		}
		childUsage = childUsage.Plus(*ends[i].Usage)
		if !strings.HasPrefix(sid, "s1.task-") {
			t.Errorf("sub-agent session %q, want it derived from s1", sid)
		}
		if !strings.HasPrefix(results[i], "answer "+p+"\n\n[sub-agent \"job ") || !strings.Contains(results[i], "session "+sid+": completed after 1 turns and 0 tool calls; usage "+
			fmt.Sprintf("%d input + %d output tokens", ends[i].Usage.Input, ends[i].Usage.Output)) {
			t.Errorf("tool result %d: %q, want the answer of %s and its account", i, results[i], p)
		}
		sess, err := h.store.Load(sid)
		if err != nil {
			t.Fatal(err)
		}
		if sess.Header.ParentSession != "s1" || sess.Header.Cwd != h.workspace {
			t.Errorf("sub-agent header %+v, want parentSession s1 and the parent's workspace", sess.Header)
		}
	}
	st := h.state()
	if res.Usage == nil || st.Usage == nil || *st.Usage != *res.Usage {
		t.Fatalf("usage: result %+v, state %+v, want the same", res.Usage, st.Usage)
	}
	own := res.Usage.Tokens() - childUsage.Tokens()
	if own <= 0 || childUsage.Tokens() <= 0 {
		t.Fatalf("usage %+v, children %+v: want the parent's own calls and its children's both counted", res.Usage, childUsage)
	}
	// Issue 39 item 3: without a budget, a usage_update after each
	// sub-agent (no answer's message_end carries its usage) is the figure
	// so far: the last one plus the final answer's is the prompt's.
	evs := h.events()
	last, _ := lastOf(evs, agent.EventUsage)
	final, _ := lastOf(evs, agent.EventMessageEnd)
	if n := len(types(evs)) - len(withoutTypes(evs, agent.EventUsage)); n != 3 || last.Usage == nil || last.Budget != nil ||
		final.Message == nil || final.Message.Usage == nil || last.Usage.Tokens()+int64(final.Message.Usage.Input+final.Message.Usage.Output) != res.Usage.Tokens() {
		t.Fatalf("%d usage_update, last %+v, final answer %+v: want 3, the last plus the answer's usage %+v", n, last, final.Message, res.Usage)
	}
	// Issue 39: the session's figure (starter sessions, the next prompt's
	// budget.session.*) is the prompt's, its sub-agents' included.
	sess, err := h.store.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	if spent, _ := session.Spent(sess); spent.Tokens() != res.Usage.Tokens() {
		t.Fatalf("session s1 spent %+v, want the prompt's %+v", spent, res.Usage)
	}
}

// Issue 25: a sub-agent whose model answers 503 retries on its own retry
// chain (its own session records the error) and its answer reaches the
// parent.
func TestSubAgent_ChildRetries503(t *testing.T) {
	h := newSubHarness(t)
	h.scripts["flaky"] = []string{"503 Service Unavailable", "text:answer after the retry"}
	h.scripts["steady"] = []string{"text:steady answer"}
	res, err := h.run(h.taskInput("flaky", "steady"))
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v, want it completed", res, err)
	}
	results := h.toolResultTexts(res.LeafID)
	if len(results) != 2 || !strings.HasPrefix(results[0], "answer after the retry\n\n") ||
		!strings.Contains(results[0], "completed after 1 turns") || !strings.HasPrefix(results[1], "steady answer") {
		t.Fatalf("tool results %q, want the flaky child's answer after its retry, and the steady one's", results)
	}
	starts, _ := subAgentEvents(h.events())
	sess, err := h.store.Load(starts[0].SessionID)
	if err != nil {
		t.Fatal(err)
	}
	var errs int
	for _, e := range sess.Entries {
		if e.Message != nil && e.Message.StopReason == agent.StopReasonError && strings.Contains(e.Message.ErrorMessage, "503") {
			errs++
		}
	}
	if errs != 1 {
		t.Fatalf("the flaky sub-agent's session holds %d 503 errors, want 1 (retried by its own chain)", errs)
	}
}

// Issue 25: aborting the parent while its sub-agents run cancels every
// one of them (no orphan): each child prompt ends aborted, each task call
// gets an aborted result, the parent ends cancelled.
func TestSubAgent_ParentAbortCancelsChildren(t *testing.T) {
	h := newSubHarness(t)
	for _, p := range []string{"a", "b", "c"} {
		h.scripts[p] = []string{"hang"}
	}
	// The children's model calls hang until the abort, sent once all
	// three are in their model call (from inside the third).
	h.gatherCalls(3, func() { h.env.SignalWorkflow(agent.SignalAbort, nil) })
	res, err := h.run(h.taskInput("a", "b", "c"))
	if h.maxInFlight != 3 {
		t.Errorf("%d sub-agents were calling their model when the abort came, want 3", h.maxInFlight)
	}
	var canceled *temporal.CanceledError
	if !errors.As(err, &canceled) {
		t.Fatalf("prompt: %+v %v, want it aborted", res, err)
	}
	starts, ends := subAgentEvents(h.events())
	if len(starts) != 3 || len(ends) != 3 {
		t.Fatalf("subagent events: %d starts, %d ends, want 3 each", len(starts), len(ends))
	}
	for i, e := range toolEnds(h.events()) {
		text := e.ToolResult.Content[0].Text
		if !e.IsError || !strings.HasPrefix(text, "The sub-agent was aborted before it answered.") {
			t.Errorf("tool_execution_end %d: %q, want the aborted sub-agent's result", i, text)
		}
	}
	for _, s := range starts {
		sess, err := h.store.Load(s.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		last := sess.Entries[len(sess.Entries)-1]
		if last.Message == nil || last.Message.StopReason != agent.StopReasonAborted {
			t.Errorf("sub-agent %s ends with %+v, want its aborted model call", s.SessionID, last.Message)
		}
	}
}

// Issue 25: agent.subagents.maxConcurrent queues the task calls of an
// answer past it; maxTotal refuses those past it with an error result;
// maxDepth keeps the task tool from a sub-agent at the limit and refuses
// its call all the same.
func TestSubAgent_Limits(t *testing.T) {
	t.Run("maxConcurrent", func(t *testing.T) {
		h := newSubHarness(t)
		// The first two calls wait for each other (a third at once would
		// make 3); the hold gives a third started with them time to show.
		h.gatherCalls(2, nil)
		h.hold = 300 * time.Millisecond
		in := h.taskInput("a", "b", "c")
		in.Agent.SubAgents.MaxConcurrent = 2
		res, err := h.run(in)
		if err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("prompt: %+v %v", res, err)
		}
		if results := h.toolResultTexts(res.LeafID); len(results) != 3 || strings.Contains(strings.Join(results, ""), "refused") {
			t.Fatalf("tool results %q, want all three run", results)
		}
		if h.maxInFlight != 2 {
			t.Fatalf("%d sub-agents ran at once, want 2", h.maxInFlight)
		}
	})
	t.Run("maxTotal", func(t *testing.T) {
		h := newSubHarness(t)
		in := h.taskInput("a", "b", "c")
		in.Agent.SubAgents.MaxTotal = 2
		res, err := h.run(in)
		if err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("prompt: %+v %v", res, err)
		}
		results := h.toolResultTexts(res.LeafID)
		want := fmt.Sprintf(SubAgentTotalMessage, 2)
		if len(results) != 3 || results[2] != want || strings.Contains(results[0]+results[1], "refused") {
			t.Fatalf("tool results %q, want the third %q", results, want)
		}
		if starts, _ := subAgentEvents(h.events()); len(starts) != 2 {
			t.Fatalf("%d sub-agents started, want 2", len(starts))
		}
	})
	t.Run("maxDepth", func(t *testing.T) {
		h := newSubHarness(t)
		h.scripts["nest"] = []string{`tool:task {"description":"deeper","prompt":"deeper"}`, "text:did it myself"}
		in := h.taskInput("nest")
		in.Agent.SubAgents.MaxDepth = 1
		res, err := h.run(in)
		if err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("prompt: %+v %v", res, err)
		}
		starts, _ := subAgentEvents(h.events())
		if len(starts) != 1 {
			t.Fatalf("%d sub-agents started, want 1", len(starts))
		}
		child := starts[0].SessionID
		for _, n := range h.childTools[child] {
			if n == tools.Task {
				t.Fatalf("the sub-agent at the depth limit was offered %v, want no task", h.childTools[child])
			}
		}
		sess, err := h.store.Load(child)
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(SubAgentDepthMessage, 1, 1)
		var got []string
		for _, e := range sess.Entries {
			if e.Message != nil && e.Message.Role == agent.RoleToolResult {
				got = append(got, e.Message.Text())
			}
		}
		if len(got) != 1 || got[0] != want {
			t.Fatalf("the sub-agent's tool results %q, want %q", got, want)
		}
		if r := h.toolResultTexts(res.LeafID); len(r) != 1 || !strings.HasPrefix(r[0], "did it myself") {
			t.Fatalf("parent's tool results %q", r)
		}
	})
	t.Run("not enabled", func(t *testing.T) {
		h := newSubHarness(t)
		res, err := h.run(h.toolInput(`tool:task {"description":"d","prompt":"p"}`, "text:ok"))
		if err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("prompt: %+v %v", res, err)
		}
		want := `Tool "task" is not enabled for this session (tools.enabled: read, write, edit, bash, grep, find, ls)`
		if r := h.toolResultTexts(res.LeafID); len(r) != 1 || r[0] != want {
			t.Fatalf("tool results %q, want %q", r, want)
		}
		if starts, _ := subAgentEvents(h.events()); len(starts) != 0 {
			t.Fatalf("%d sub-agents started, want none", len(starts))
		}
	})
	t.Run("bad arguments", func(t *testing.T) {
		h := newSubHarness(t)
		in := h.toolInput(`tool:task {"description":"no prompt"}`, "text:ok")
		in.Tools.Enabled = append(in.Tools.Enabled, tools.Task)
		res, err := h.run(in)
		if err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("prompt: %+v %v", res, err)
		}
		want := `invalid arguments for task: missing required parameter "prompt"`
		if r := h.toolResultTexts(res.LeafID); len(r) != 1 || r[0] != want {
			t.Fatalf("tool results %q, want %q", r, want)
		}
	})
}

// Issue 25: a budget reached inside a sub-agent stops the sub-agent (it
// gets what is left of the parent's), and the parent, whose usage counts
// the sub-agent's, stops before its next model call.
func TestSubAgent_BudgetReachedInChild(t *testing.T) {
	h := newSubHarness(t)
	h.scripts["spend"] = []string{`tool:ls {}`, `tool:ls {}`, `tool:ls {}`, `tool:ls {}`, "text:never reached"}
	in := h.taskInput("spend")
	in.Budget.MaxTokens = 80
	_, err := h.run(in)
	status, msg := promptStatus(t, err)
	if status != agent.StatusFailed || !strings.HasPrefix(msg, "budget.maxTokens 80 reached") {
		t.Fatalf("prompt: %s %q, want it stopped by its budget", status, msg)
	}
	var parentCalls int
	for _, c := range h.calls {
		if c.SessionID == "s1" {
			parentCalls++
		}
	}
	if parentCalls != 1 {
		t.Fatalf("the parent called its model %d times, want 1 (its budget reached inside the child)", parentCalls)
	}
	ends := toolEnds(h.events())
	if len(ends) != 1 || !ends[0].IsError || !strings.HasPrefix(ends[0].ToolResult.Content[0].Text, "The sub-agent failed: budget.maxTokens ") {
		t.Fatalf("tool_execution_end %+v, want the sub-agent stopped by its budget", ends)
	}
	_, subEnds := subAgentEvents(h.events())
	if len(subEnds) != 1 || subEnds[0].Usage == nil || subEnds[0].Usage.Tokens() == 0 {
		t.Fatalf("subagent_end %+v, want its usage", subEnds)
	}
	child := subEnds[0].Usage.Tokens()
	if left := 80 - (h.state().Usage.Tokens() - child); child >= 80 || child < left {
		t.Fatalf("the sub-agent spent %d tokens, want at least the %d the parent had left and less than the parent's 80", child, left)
	}
}

// Issue 25: a task call with worktree true gives its sub-agent a git
// worktree of its own on branch agent/<child session>, made from the
// parent's workspace's HEAD; outside a git repository the sub-agent fails
// and the parent reads why in one line.
func TestSubAgent_Worktree(t *testing.T) {
	worktreeTask := func(h *subHarness) PromptInput {
		in := h.toolInput(`tool:task {"description":"isolated","prompt":"work apart","worktree":true}`, "text:ok")
		in.Tools.Enabled = append(in.Tools.Enabled, tools.Task)
		return in
	}
	t.Run("git repository", func(t *testing.T) {
		h := newSubHarness(t)
		h.workspace = t.TempDir()
		if err := os.WriteFile(filepath.Join(h.workspace, "a.txt"), []byte("base\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"init", "--quiet"}, {"add", "a.txt"}, {"commit", "--quiet", "-m", "base"}} {
			out, err := exec.Command("git", append([]string{"-C", h.workspace, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
		h.acts.WorktreeDir = t.TempDir()
		h.env.RegisterActivityWithOptions(h.acts.WorktreeSummary, activity.RegisterOptions{Name: activities.WorktreeSummaryName})
		h.scripts["work apart"] = []string{`tool:bash {"command":"echo made > by-bash.txt"}`, "text:done apart"}
		res, err := h.run(worktreeTask(h))
		if err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("prompt: %+v %v", res, err)
		}
		starts, ends := subAgentEvents(h.events())
		if len(starts) != 1 || len(ends) != 1 || ends[0].IsError {
			t.Fatalf("subagent events %+v %+v, want one that answered", starts, ends)
		}
		sess, err := h.store.Load(starts[0].SessionID)
		if err != nil {
			t.Fatal(err)
		}
		wt := sess.Header.Worktree
		if wt == nil || wt.Branch != "agent/"+starts[0].SessionID || !strings.HasPrefix(sess.Header.Cwd, h.acts.WorktreeDir) {
			t.Fatalf("sub-agent header %+v (worktree %+v), want a worktree of its own", sess.Header, wt)
		}
		// Its branch knows the file bash made there; the parent's
		// workspace has no such change.
		if r := h.toolResultTexts(res.LeafID); len(r) != 1 ||
			!strings.Contains(r[0], "; files changed on its branch: by-bash.txt; branch agent/"+starts[0].SessionID+": no commits since ") {
			t.Fatalf("tool results %q, want the account to name the branch's file and say where the branch stands", r)
		}
		if len(res.FilesChanged) != 0 {
			t.Fatalf("the parent's files changed %q, want none (the sub-agent's are on its branch)", res.FilesChanged)
		}
	})
	t.Run("not a repository", func(t *testing.T) {
		h := newSubHarness(t)
		h.acts.WorktreeDir = t.TempDir()
		res, err := h.run(worktreeTask(h))
		if err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("prompt: %+v %v", res, err)
		}
		r := h.toolResultTexts(res.LeafID)
		if len(r) != 1 || !strings.HasPrefix(r[0], "The sub-agent failed: ") || !strings.Contains(r[0], "git repository") {
			t.Fatalf("tool results %q, want the sub-agent's failure naming git", r)
		}
	})
}

// Issue 25 (SPEC 17.3): the account of a sub-agent names the files its
// successful write and edit calls changed (paths inside the workspace
// relative to it; a failed edit changes nothing), and the parent's own
// result counts them as its changes.
func TestSubAgent_AccountListsFilesChanged(t *testing.T) {
	h := newSubHarness(t)
	if err := os.WriteFile(filepath.Join(h.workspace, "b.txt"), []byte("old line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edit, _ := json.Marshal(map[string]string{"path": filepath.Join(h.workspace, "b.txt"), "oldText": "old", "newText": "new"})
	h.scripts["change two files"] = []string{
		`tool:write {"path":"a.txt","content":"hello\n"}`,
		"tool:edit " + string(edit),
		`tool:edit {"path":"missing.txt","oldText":"x","newText":"y"}`,
		`tool:write {"path":"a.txt","content":"hello again\n"}`,
		"text:changed them",
	}
	res, err := h.run(h.taskInput("change two files"))
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v, want it completed", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(h.workspace, "b.txt")); string(b) != "new line\n" {
		t.Fatalf("b.txt holds %q, want the sub-agent's edit", b)
	}
	results := h.toolResultTexts(res.LeafID)
	if len(results) != 1 || !strings.HasPrefix(results[0], "changed them\n\n") ||
		!strings.Contains(results[0], "after 5 turns and 4 tool calls; usage ") ||
		!strings.HasSuffix(results[0], "; files changed: a.txt, b.txt]") {
		t.Fatalf("tool results %q, want the answer and an account naming a.txt and b.txt", results)
	}
	if strings.Join(res.FilesChanged, ",") != "a.txt,b.txt" || res.FilesChangedMore != 0 {
		t.Fatalf("the parent's files changed %q (+%d), want its sub-agent's a.txt and b.txt", res.FilesChanged, res.FilesChangedMore)
	}
}

// SPEC 17.3: past MaxFilesChanged paths the account counts the rest
// instead of listing them, so the result stays bounded.
func TestSubAgent_FilesChangedBounded(t *testing.T) {
	r := &run{loop: loop{Workspace: "/w"}}
	for i := range MaxFilesChanged + 3 {
		r.addFilesChanged(0, r.workspacePath(fmt.Sprintf("/w/d/f%02d.go", i)))
		r.addFilesChanged(0, fmt.Sprintf("d/f%02d.go", i)) // the same file, named relative
	}
	if len(r.FilesChanged) != MaxFilesChanged || r.FilesChangedMore != 6 || r.FilesChanged[0] != "d/f00.go" {
		t.Fatalf("files %d (first %q), more %d: want %d listed and the 3 others (twice each) counted", len(r.FilesChanged), r.FilesChanged[0], r.FilesChangedMore, MaxFilesChanged)
	}
	if got := filesText("files changed", "by write or edit", r.FilesChanged[:2], 4); got != "files changed: d/f00.go, d/f01.go and 4 more" {
		t.Fatalf("filesText = %q", got)
	}
}

// Issue 25 (SPEC 17.6): a parent whose history is past the
// continue-as-new threshold while its sub-agents run keeps waiting for
// them: it continues as new only at the turn boundary, after every
// child's result reached it, carrying its count of sub-agents and the
// files they changed; the next run starts no child again.
func TestSubAgent_ContinueAsNewWaitsForChildren(t *testing.T) {
	h := newSubHarness(t)
	h.hold = 200 * time.Millisecond
	h.scripts["alpha"] = []string{`tool:write {"path":"alpha.txt","content":"a\n"}`, "text:answer alpha"}
	h.scripts["beta"] = []string{"text:answer beta"}
	h.scripts["gamma"] = []string{"text:answer gamma"}
	in := h.taskInput("alpha", "beta", "gamma")
	in.Agent.ContinueAsNewEvents = 20
	h.env.SetCurrentHistoryLength(25) // past the threshold from the start
	next := h.continued(in)

	starts, ends := subAgentEvents(h.events())
	if len(starts) != 3 || len(ends) != 3 {
		t.Fatalf("first run: %d subagent_start, %d subagent_end, want 3 each before it continued as new", len(starts), len(ends))
	}
	c := next.Continued
	if c == nil || c.SubAgents != 3 || strings.Join(c.FilesChanged, ",") != "alpha.txt" {
		t.Fatalf("carried %+v, want 3 sub-agents and alpha.txt changed", c)
	}
	results := h.toolResultTexts(c.LeafID)
	if len(results) != 3 {
		t.Fatalf("tool results before continue-as-new %q, want 3", results)
	}
	for i, p := range []string{"alpha", "beta", "gamma"} {
		if !strings.HasPrefix(results[i], "answer "+p+"\n\n") {
			t.Errorf("tool result %d: %q, want the answer of %s", i, results[i], p)
		}
	}

	h2 := newSubHarness(t)
	h2.store, h2.acts.Sessions, h2.workspace = h.store, h.store, h.workspace
	res, err := h2.run(next)
	if err != nil || res.Status != agent.StatusCompleted || res.Text != "all done" {
		t.Fatalf("continued run: %+v %v, want it completed", res, err)
	}
	if starts2, _ := subAgentEvents(h2.events()); len(starts2) != 0 {
		t.Fatalf("the continued run started %d sub-agents, want none", len(starts2))
	}
	if strings.Join(res.FilesChanged, ",") != "alpha.txt" {
		t.Fatalf("files changed %q, want alpha.txt carried", res.FilesChanged)
	}
	// Each child ran once: one user message and its model script once.
	perSession := map[string]int{}
	for _, in := range append(h.calls, h2.calls...) {
		perSession[in.SessionID]++
	}
	for i, s := range starts {
		want := 1
		if i == 0 {
			want = 2 // alpha's write, then its answer
		}
		if perSession[s.SessionID] != want {
			t.Errorf("sub-agent %s called its model %d times, want %d", s.SessionID, perSession[s.SessionID], want)
		}
		sess, err := h.store.Load(s.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		users := 0
		for _, e := range sess.Entries {
			if e.Message != nil && e.Message.Role == agent.RoleUser {
				users++
			}
		}
		if users != 1 {
			t.Errorf("sub-agent %s has %d user messages, want 1 (started once)", s.SessionID, users)
		}
	}
}

// SPEC 17.9: in its parent's workspace, a sub-agent's account lists what
// changed since the checkpoint of each turn with a bash command, beside
// its write and edit calls' files, in a git repository or not; two
// sub-agents started together may see each other's changes, and their
// accounts say so; with checkpoints off the account says bash's changes
// are not known.
func TestSubAgent_AccountListsBashChanges(t *testing.T) {
	gitRepo := func(t *testing.T, dir string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("old line\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"init", "--quiet"}, {"add", "b.txt"}, {"commit", "--quiet", "-m", "base"}} {
			out, err := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
		}
	}
	script := []string{
		`tool:write {"path":"a.txt","content":"hello\n"}`,
		`tool:bash {"command":"sed -i s/old/new/ b.txt && mkdir -p gen && echo x > gen/c.txt"}`,
		`tool:bash {"command":"echo again >> b.txt; ls > /dev/null"}`,
		"text:changed them",
	}

	t.Run("git repository", func(t *testing.T) {
		h := newSubHarness(t)
		h.workspace = t.TempDir()
		gitRepo(t, h.workspace)
		h.scripts["change files with bash"] = script
		res, err := h.run(h.taskInput("change files with bash"))
		if err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("prompt: %+v %v, want it completed", res, err)
		}
		results := h.toolResultTexts(res.LeafID)
		want := "; files changed (by write and edit, and in the workspace while its bash commands ran): a.txt, b.txt, gen/c.txt]"
		if len(results) != 1 || !strings.HasSuffix(results[0], want) {
			t.Fatalf("tool results %q, want the account ending %q", results, want)
		}
		if strings.Join(res.FilesChanged, ",") != "a.txt,b.txt,gen/c.txt" {
			t.Fatalf("the parent's files changed %q, want a.txt, b.txt, gen/c.txt", res.FilesChanged)
		}
	})

	t.Run("siblings in one workspace", func(t *testing.T) {
		h := newSubHarness(t)
		h.workspace = t.TempDir()
		gitRepo(t, h.workspace)
		h.scripts["one"] = []string{`tool:bash {"command":"echo 1 > one.txt"}`, "text:one done"}
		h.scripts["two"] = []string{`tool:bash {"command":"echo 2 > two.txt"}`, "text:two done"}
		res, err := h.run(h.taskInput("one", "two"))
		if err != nil || res.Status != agent.StatusCompleted {
			t.Fatalf("prompt: %+v %v, want it completed", res, err)
		}
		results := h.toolResultTexts(res.LeafID)
		if len(results) != 2 {
			t.Fatalf("tool results %q, want two", results)
		}
		for i, own := range []string{"one.txt", "two.txt"} {
			if !strings.Contains(results[i], own) || !strings.Contains(results[i], "1 other sub-agents started with it may have worked in the same workspace meanwhile") {
				t.Fatalf("account %d = %q, want %s and the note that a sibling shared the workspace", i, results[i], own)
			}
		}
	})

	for _, tc := range []struct{ name, want string }{
		{"not a git repository", "; files changed (by write and edit, and in the workspace while its bash commands ran): b.txt, gen/c.txt]"},
		{"checkpoints off", "; no files changed by write or edit; bash's changes not known: the turn has no checkpoint]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newSubHarness(t)
			h.acts.Checkpoints.Off = tc.name == "checkpoints off"
			h.scripts["change files with bash"] = script[1:]
			if err := os.WriteFile(filepath.Join(h.workspace, "b.txt"), []byte("old line\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			res, err := h.run(h.taskInput("change files with bash"))
			if err != nil || res.Status != agent.StatusCompleted {
				t.Fatalf("prompt: %+v %v, want it completed", res, err)
			}
			results := h.toolResultTexts(res.LeafID)
			if len(results) != 1 || !strings.HasSuffix(results[0], tc.want) {
				t.Fatalf("tool results %q, want the account ending %q", results, tc.want)
			}
		})
	}
}

// toolEnds returns the tool_execution_end events.
func toolEnds(evs []agent.Event) []agent.Event {
	var out []agent.Event
	for _, e := range evs {
		if e.Type == agent.EventToolExecutionEnd {
			out = append(out, e)
		}
	}
	return out
}
