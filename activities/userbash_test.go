package activities

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/tools"
)

// userBash runs UserBash in the test activity environment; cancelling
// ctx cancels it as abort_bash does.
func userBash(t *testing.T, store *session.Store, ctx context.Context, in UserBashInput) (UserBashResult, error) {
	t.Helper()
	return userBashWith(t, &Activities{Sessions: store, HeartbeatInterval: 50 * time.Millisecond}, ctx, in)
}

// userBashWith is userBash with the worker's Activities.
func userBashWith(t *testing.T, acts *Activities, ctx context.Context, in UserBashInput) (UserBashResult, error) {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(acts.UserBash, activityName(UserBashName))
	env.SetTestTimeout(20 * time.Second)
	env.SetWorkerOptions(workerOptionsWithContext(ctx))
	v, err := env.ExecuteActivity(UserBashName, in)
	var res UserBashResult
	if err == nil {
		err = v.Get(&res)
	}
	return res, err
}

func userBashStore(t *testing.T) (*session.Store, string) {
	t.Helper()
	store, err := session.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	if _, err := store.Init("s1", session.Header{Cwd: ws}); err != nil {
		t.Fatal(err)
	}
	return store, ws
}

// A user command cancelled by abort_bash stops, and its entry keeps the
// output so far, marked cancelled, without an exit code. A re-run of the
// activity returns the entry instead of running the command again.
// abort_bash is a cancel the workflow asked for: the SDK cancels the
// context with a CanceledError.
func TestUserBash_CancelledKeepsTheOutputSoFar(t *testing.T) {
	store, ws := userBashStore(t)
	ctx, cancel := context.WithCancelCause(context.Background())
	time.AfterFunc(700*time.Millisecond, func() { cancel(temporal.NewCanceledError()) })
	in := UserBashInput{SessionID: "s1", EntryID: "b1", Command: "echo started; sleep 20; echo never", Workspace: ws}
	start := time.Now()
	res, err := userBash(t, store, ctx, in)
	if err != nil || time.Since(start) > 10*time.Second {
		t.Fatalf("UserBash = %+v, %v after %s", res, err, time.Since(start))
	}
	if !res.Cancelled || res.ExitCode != nil || res.Preview != "started" {
		t.Fatalf("result = %+v", res)
	}
	sess, _ := store.Load("s1")
	e, _ := sess.Get("b1")
	if e.Message.Output != "started" || !e.Message.Cancelled || e.Message.Command != in.Command {
		t.Fatalf("entry = %+v", e.Message)
	}
	in.Command = "touch ran-again"
	if res, err := userBash(t, store, context.Background(), in); err != nil || !res.Cancelled {
		t.Fatalf("re-run = %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran-again")); err == nil {
		t.Fatal("the re-run ran the command again")
	}
}

// Issue 15 item 4: a user command whose context ends without abort_bash
// (failing heartbeats, worker shutdown, deadline) is killed, but no
// entry says it was cancelled: nobody cancelled it, and the workflow
// reports the command's fate unknown.
func TestUserBash_CancelNobodyAskedForKillsTheCommandAndWritesNothing(t *testing.T) {
	for name, cause := range cancelsNobodyAskedFor {
		t.Run(name, func(t *testing.T) {
			store, ws := userBashStore(t)
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			time.AfterFunc(300*time.Millisecond, func() { cancel(cause) })
			in := UserBashInput{SessionID: "s1", EntryID: "b1", Command: "echo started; sleep 20; echo late > late.txt", Workspace: ws}
			start := time.Now()
			res, err := userBash(t, store, ctx, in)
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("the cancelled command took %v: it was not killed", d)
			}
			if _, serr := os.Stat(filepath.Join(ws, "late.txt")); serr == nil {
				t.Fatal("late.txt exists: the command kept running")
			}
			if err == nil {
				t.Fatalf("a command cancelled by %v reported a result %+v", cause, res)
			}
			sess, _ := store.Load("s1")
			if e, ok := sess.Get("b1"); ok {
				t.Fatalf("entry %+v written, want none (nobody cancelled the command)", e.Message)
			}
		})
	}
}

// The bash tool's result becomes the terminal agent's bashExecution
// fields: the output without the tool's status line, the exit code, the
// truncation.
func TestBashExecutionMessage(t *testing.T) {
	zero, two := 0, 2
	for _, tc := range []struct {
		name string
		res  tools.Result
		want agent.Message
	}{
		{"success", tools.Result{Content: "a\nb", Details: map[string]any{"exitCode": 0}}, agent.Message{Output: "a\nb", ExitCode: &zero}},
		{"no output", tools.Result{Content: "(no output)", Details: map[string]any{"exitCode": 0}}, agent.Message{ExitCode: &zero}},
		{"failure", tools.Result{Content: "x\n\nerr\n\nCommand exited with code 2", IsError: true, Details: map[string]any{"exitCode": 2}},
			agent.Message{Output: "x\n\nerr", ExitCode: &two}},
		{"failure without output", tools.Result{Content: "Command exited with code 2", IsError: true, Details: map[string]any{"exitCode": 2}},
			agent.Message{ExitCode: &two}},
		{"truncated", tools.Result{Content: "tail", Details: map[string]any{"exitCode": 0, "truncated": true, "fullOutputPath": "/w/o.log"}},
			agent.Message{Output: "tail", ExitCode: &zero, Truncated: true, FullOutputPath: "/w/o.log"}},
		{"aborted", tools.Result{Content: "so far\n\nCommand aborted", IsError: true, Details: map[string]any{"aborted": true}},
			agent.Message{Output: "so far", Cancelled: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := BashExecutionMessage("cmd", tc.res, false)
			tc.want.Role, tc.want.Command = agent.RoleBashExecution, "cmd"
			if m.Output != tc.want.Output || m.Cancelled != tc.want.Cancelled || m.Truncated != tc.want.Truncated ||
				m.FullOutputPath != tc.want.FullOutputPath || (m.ExitCode == nil) != (tc.want.ExitCode == nil) ||
				(m.ExitCode != nil && *m.ExitCode != *tc.want.ExitCode) || !strings.EqualFold(string(m.Role), "bashExecution") {
				t.Fatalf("got %+v, want %+v", m, tc.want)
			}
		})
	}
}

// Issue 24 (RPC bash_execution_update): while the command runs, the
// heartbeats publish its output tail as a tool snapshot of its entry, the
// live output a follower turns into updates.
func TestUserBash_HeartbeatsPublishTheOutputTail(t *testing.T) {
	store, ws := userBashStore(t)
	log := &beatLog{}
	acts := &Activities{Sessions: store, HeartbeatInterval: 50 * time.Millisecond, recordHeartbeat: log.record}
	res, err := userBashWith(t, acts, context.Background(), UserBashInput{SessionID: "s1", EntryID: "b1", Command: "echo one; sleep 0.6; echo two; sleep 0.6", Workspace: ws})
	if err != nil || res.Preview != "one\ntwo" {
		t.Fatalf("result = %+v, %v", res, err)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	var outputs []string
	for _, s := range log.snaps {
		if s.Kind != live.KindTool || s.EntryID != "b1" || s.ToolName != tools.Bash {
			t.Fatalf("snapshot %+v, want a bash tool snapshot of b1", s)
		}
		if len(outputs) == 0 || outputs[len(outputs)-1] != s.Output {
			outputs = append(outputs, s.Output)
		}
	}
	joined := strings.Join(outputs, "|")
	if !strings.Contains(joined, "one") || !strings.Contains(joined, "two") || strings.Index(joined, "one") > strings.Index(joined, "two") {
		t.Fatalf("published outputs %q, want the output as it grew", outputs)
	}
}
