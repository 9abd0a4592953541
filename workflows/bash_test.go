package workflows

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/llm/scripted"
)

func (h *harness) runBash(command string) (BashResult, error) {
	h.t.Helper()
	return h.runBashInput(BashInput{SessionID: "s1", Command: command, Workspace: h.workspace})
}

func (h *harness) runBashInput(in BashInput) (BashResult, error) {
	h.t.Helper()
	h.env.RegisterWorkflowWithOptions(Bash, workflow.RegisterOptions{Name: BashWorkflowName})
	h.env.RegisterActivityWithOptions(func(ctx context.Context, in activities.UserBashInput) (activities.UserBashResult, error) {
		if h.userBash != nil {
			return h.userBash(ctx, in)
		}
		return h.acts.UserBash(ctx, in)
	}, activity.RegisterOptions{Name: activities.UserBashName})
	h.env.ExecuteWorkflow(BashWorkflowName, in)
	if !h.env.IsWorkflowCompleted() {
		h.t.Fatal("workflow did not complete")
	}
	var res BashResult
	err := h.env.GetWorkflowResult(&res)
	return res, err
}

// RPC bash: the command runs in the session's workspace with the
// worker's secrets scrubbed, and is written after the leaf as the
// terminal agent's bashExecution message; a failing command is a
// completed run with its exit code.
func TestBash_RecordsTheCommandInTheSession(t *testing.T) {
	t.Setenv("DEPLOY_TOKEN", "s3cr3t-value")
	h := newHarness(t)
	res, err := h.runBash(`echo "in $(basename "$PWD") token=[$DEPLOY_TOKEN]"; exit 3`)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != agent.StatusCompleted || res.ExitCode == nil || *res.ExitCode != 3 || res.Cancelled || res.EntryID == "" {
		t.Fatalf("result = %+v", res)
	}
	sess, err := h.store.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	if sess.Header.Cwd != h.workspace || sess.LeafID() != res.EntryID {
		t.Fatalf("header cwd %q leaf %q", sess.Header.Cwd, sess.LeafID())
	}
	e, _ := sess.Get(res.EntryID)
	m := e.Message
	want := "in " + lastElem(h.workspace) + " token=[]"
	if m.Role != agent.RoleBashExecution || m.Output != want || *m.ExitCode != 3 || m.Cancelled || m.Timestamp == 0 {
		t.Fatalf("entry = %+v, want output %q", m, want)
	}
	if evs := h.events(); len(evs) != 1 || evs[0].Type != agent.EventPromptEnd || evs[0].Status != agent.StatusCompleted {
		t.Fatalf("events = %+v", evs)
	}
	// The one entry is one message in the state's count (pi's get_state).
	if n := h.state().MessageCount; n != len(sess.Context(sess.LeafID())) {
		t.Fatalf("state messageCount %d, session context %d messages", n, len(sess.Context(sess.LeafID())))
	}
}

// abort (RPC abort_bash) stops the command: the entry records it as
// cancelled with the output so far and no exit code.
func TestBash_AbortCancelsTheCommand(t *testing.T) {
	h := newHarness(t)
	var during agent.State
	h.userBash = func(ctx context.Context, in activities.UserBashInput) (activities.UserBashResult, error) {
		return whileRunning(h, ctx, "started",
			func() (activities.UserBashResult, error) { return h.acts.UserBash(ctx, in) },
			func() {
				during = h.state()
				h.env.SignalWorkflow(agent.SignalAbort, nil)
			})
	}
	start := time.Now()
	res, err := h.runBash("echo started; touch started; sleep 30; echo never")
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("abort took %s", time.Since(start))
	}
	if !res.Cancelled || res.ExitCode != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("result = %+v", res)
	}
	if len(during.RunningTools) != 1 || !strings.HasPrefix(during.RunningTools[0], "bash echo started") || during.Status != agent.StatusRunning {
		t.Fatalf("state while running = %+v", during)
	}
	// The activity records the output so far (activities'
	// TestUserBash_Cancelled); the test environment resolves the
	// cancelled activity before it returns, so here the workflow's own
	// record may win.
	sess, _ := h.store.Load("s1")
	e, ok := sess.Get(res.EntryID)
	if !ok || !e.Message.Cancelled || e.Message.ExitCode != nil || e.Message.Role != agent.RoleBashExecution || sess.LeafID() != res.EntryID {
		t.Fatalf("entry = %+v", e.Message)
	}
}

// then is a new harness (a test environment runs one workflow) on the
// same session store and workspace.
func (h *harness) then() *harness {
	n := newHarness(h.t)
	n.store, n.acts.Sessions, n.workspace = h.store, h.store, h.workspace
	return n
}

// Issue 24 (RPC bash excludeFromContext, pi's `!!`): the command is
// recorded in the session with its output and marked, and the next
// prompt's model is not sent it; a command run without it is sent.
func TestBash_ExcludeFromContextKeepsTheOutputFromTheModel(t *testing.T) {
	h := newHarness(t)
	hidden, err := h.runBashInput(BashInput{SessionID: "s1", Command: "echo private-output", Workspace: h.workspace, ExcludeFromContext: true})
	if err != nil {
		t.Fatal(err)
	}
	h2 := h.then()
	if _, err := h2.runBash("echo shared-output"); err != nil {
		t.Fatal(err)
	}
	sess, _ := h.store.Load("s1")
	if e, ok := sess.Get(hidden.EntryID); !ok || !e.Message.ExcludeFromContext || e.Message.Output != "private-output" {
		t.Fatalf("excluded entry = %+v, want its output, marked excludeFromContext", e.Message)
	}

	h3 := h.then()
	var sent []agent.Message
	prov := scripted.New(scripted.Options{Reply: "done"})
	h3.acts.Provider = func(string) (llm.Provider, error) {
		return llm.ProviderFunc(func(ctx context.Context, req llm.Request) agent.Message {
			sent = req.Messages
			return prov.Complete(ctx, req)
		}), nil
	}
	if _, err := h3.run(input()); err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, m := range sent {
		all = append(all, m.Text())
	}
	text := strings.Join(all, "\n")
	if strings.Contains(text, "private-output") || strings.Contains(text, "echo private-output") {
		t.Errorf("the model was sent the excluded command:\n%s", text)
	}
	if !strings.Contains(text, "Ran `echo shared-output`") || !strings.Contains(text, "fix the bug") {
		t.Errorf("the model was not sent the other command and the prompt:\n%s", text)
	}
}

func TestBashInput_Validate(t *testing.T) {
	for _, tc := range []struct {
		in   BashInput
		want string
	}{
		{BashInput{Command: "ls"}, "sessionId is empty"},
		{BashInput{SessionID: "s", Command: "  "}, "command is empty"},
		{BashInput{SessionID: "s", Command: "ls", TimeoutMs: -1}, "timeouts must be >= 0"},
	} {
		if err := tc.in.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.in, err, tc.want)
		}
	}
}

func lastElem(p string) string { return p[strings.LastIndex(p, "/")+1:] }
