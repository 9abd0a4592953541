package activities

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/session"
)

// toolFixture is a session whose assistant entry "a1" asks for calls.
func toolFixture(t *testing.T, calls ...agent.ToolCall) (*fixture, string) {
	t.Helper()
	f := newFixture(t, scripted.New(scripted.Options{}))
	f.env.RegisterActivityWithOptions(f.acts.RunTool, activityName(RunToolName))
	f.env.RegisterActivityWithOptions(f.acts.BeginPrompt, activityName(BeginPromptName))
	f.env.RegisterActivityWithOptions(f.acts.RecordEntry, activityName(RecordEntryName))
	f.acts.ToolPolicy = ToolPolicy{Confine: true}
	m := agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonToolUse}
	for i := range calls {
		m.Content = append(m.Content, agent.ContentBlock{Type: "toolCall", ToolCall: &calls[i]})
	}
	if _, err := f.store.Append("s1", session.Entry{Type: session.TypeMessage, ID: "a1", ParentID: "u1", Timestamp: time.Now(), Message: &m}); err != nil {
		t.Fatal(err)
	}
	return f, t.TempDir()
}

func (f *fixture) runTool(t *testing.T, ws, callID, name, resultID string) (RunToolResult, error) {
	t.Helper()
	v, err := f.env.ExecuteActivity(RunToolName, RunToolInput{SessionID: "s1", AssistantEntryID: "a1",
		ToolCallID: callID, ToolName: name, ResultEntryID: resultID, ParentID: "a1", Workspace: ws,
		Tools: agent.Tools{Enabled: []string{"read", "write", "edit", "bash", "grep", "find", "ls"}}})
	var res RunToolResult
	if err == nil {
		if gerr := v.Get(&res); gerr != nil {
			t.Fatal(gerr)
		}
	}
	return res, err
}

func call(id, name, args string) agent.ToolCall {
	return agent.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
}

// Issue 10 (exactly once): the result entry is written before RunTool
// returns, and a re-run finds it and does not act again.
func TestRunTool_ReRunReturnsTheStoredResultWithoutActing(t *testing.T) {
	f, ws := toolFixture(t, call("c1", "bash", `{"command":"echo ran >> effects.log; echo ok"}`))
	first, err := f.runTool(t, ws, "c1", "bash", "r1")
	if err != nil || first.IsError || !strings.Contains(first.Preview, "ok") {
		t.Fatalf("first run: %+v %v", first, err)
	}
	again, err := f.runTool(t, ws, "c1", "bash", "r1")
	if err != nil || !again.Reused || again.Preview != first.Preview {
		t.Fatalf("re-run: %+v %v", again, err)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "effects.log")); string(b) != "ran\n" {
		t.Fatalf("effects.log %q: the command ran twice", b)
	}
	sess, _ := f.store.Load("s1")
	e, ok := sess.Get("r1")
	if !ok || e.ParentID != "a1" || e.Message.Role != agent.RoleToolResult || e.Message.ToolCallID != "c1" || e.Message.ToolName != "bash" {
		t.Fatalf("result entry %+v", e)
	}
}

// Issue 10: bash runs without the worker's secrets.
func TestRunTool_BashDoesNotSeeTheWorkersSecrets(t *testing.T) {
	t.Setenv("FOO_API_KEY", "sk-should-not-leak-1234")
	t.Setenv("GITHUB_TOKEN", "ghp_should_not_leak")
	t.Setenv("PLAIN_SETTING", "visible")
	f, ws := toolFixture(t, call("c1", "bash", `{"command":"env"}`))
	res, err := f.runTool(t, ws, "c1", "bash", "r1")
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := f.store.Load("s1")
	e, _ := sess.Get(res.EntryID)
	out := e.Message.Text()
	if strings.Contains(out, "should-not-leak") || strings.Contains(out, "should_not_leak") || !strings.Contains(out, "PLAIN_SETTING=visible") {
		t.Fatalf("bash environment:\n%s", out)
	}
	f.acts.ToolPolicy.EnvAllow = []string{"GITHUB_TOKEN"}
	res, _ = f.runTool(t, ws, "c1", "bash", "r2")
	sess, _ = f.store.Load("s1")
	e, _ = sess.Get(res.EntryID)
	if !strings.Contains(e.Message.Text(), "GITHUB_TOKEN=ghp_should_not_leak") {
		t.Fatal("an allow-listed variable is missing")
	}
}

// Issue 10 (workspace): a workspace outside tools.allowedRoots is refused
// with an error naming the setting; so is a session without one.
func TestBeginPrompt_RefusesAWorkspaceOutsideAllowedRoots(t *testing.T) {
	f, ws := toolFixture(t)
	f.acts.ToolPolicy.AllowedRoots = []string{t.TempDir()}
	_, err := f.env.ExecuteActivity(BeginPromptName, BeginPromptInput{SessionID: "new-1", Workspace: ws,
		UserEntryID: "u", Message: "hi", NeedWorkspace: true})
	if err == nil || !strings.Contains(err.Error(), "tools.allowedRoots") || !strings.Contains(err.Error(), ws) {
		t.Fatalf("err %v, want a refusal naming tools.allowedRoots and %s", err, ws)
	}
	f.acts.ToolPolicy.AllowedRoots = []string{filepath.Dir(ws)}
	v, err := f.env.ExecuteActivity(BeginPromptName, BeginPromptInput{SessionID: "new-2", Workspace: ws,
		UserEntryID: "u", Message: "hi", NeedWorkspace: true})
	if err != nil {
		t.Fatal(err)
	}
	var b BeginPromptResult
	_ = v.Get(&b)
	if b.Workspace != ws || b.LeafID != "u" || b.MessageCount != 1 {
		t.Fatalf("begin %+v", b)
	}
	// The session keeps the workspace it was created with.
	v, err = f.env.ExecuteActivity(BeginPromptName, BeginPromptInput{SessionID: "new-2", Workspace: t.TempDir(),
		UserEntryID: "u2", Message: "again", NeedWorkspace: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = v.Get(&b)
	if b.Workspace != ws || b.LeafID != "u2" || b.MessageCount != 2 {
		t.Fatalf("second prompt %+v, want workspace %s kept", b, ws)
	}
}

// Issue 10 (confinement): file tools refuse paths that leave the
// workspace; the refusal is an error result the model sees.
func TestRunTool_FileToolsStayInTheWorkspace(t *testing.T) {
	f, ws := toolFixture(t, call("c1", "read", `{"path":"../../etc/passwd"}`))
	res, err := f.runTool(t, ws, "c1", "read", "r1")
	if err != nil || !res.IsError || !strings.Contains(res.Preview, "outside the workspace") {
		t.Fatalf("result %+v %v", res, err)
	}
}

// Issue 10 (providers): arguments that are not a JSON object become an
// error result telling the model to send valid JSON.
func TestRunTool_InvalidArgumentsAreAnErrorResult(t *testing.T) {
	f, ws := toolFixture(t, call("c1", "read", `"{\"path\": "`))
	res, err := f.runTool(t, ws, "c1", "read", "r1")
	if err != nil || !res.IsError || !strings.Contains(res.Preview, "not a JSON object") {
		t.Fatalf("result %+v %v", res, err)
	}
}

// Issue 10 (history stays flat): what RunTool returns to history does not
// grow with the tool's output.
func TestRunTool_ResultIsBoundedWhateverTheOutput(t *testing.T) {
	f, ws := toolFixture(t, call("c1", "bash", `{"command":"head -c 200000 /dev/zero | tr '\\0' x"}`))
	res, err := f.runTool(t, ws, "c1", "bash", "r1")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if len(b) > 600 || res.Bytes < 50*1024 {
		t.Fatalf("result %d bytes in history (output %d bytes)", len(b), res.Bytes)
	}
	if _, err := os.Stat(filepath.Join(ws, ".durable-agent", ".gitignore")); err != nil {
		t.Fatalf("the full-output directory is not ignored: %v", err)
	}
}

// Issue 10: the workflow's view of tool calls is bounded too: long string
// arguments are shortened in the preview and it stays a JSON object.
func TestArgsPreview_BoundedAndValid(t *testing.T) {
	args, _ := json.Marshal(map[string]any{"path": "a.txt", "content": strings.Repeat("y", 100000)})
	p := ArgsPreview(args)
	var m map[string]any
	if json.Unmarshal(p, &m) != nil || len(p) > 400 || m["path"] != "a.txt" {
		t.Fatalf("preview %s", p)
	}
	// One ellipsis, then the size: "yyy… (100000 bytes)".
	if c, _ := m["content"].(string); !strings.HasSuffix(c, "y… (100000 bytes)") {
		t.Fatalf("content preview %q: want the cut text, one ellipsis and the size", c)
	}
	if p := ArgsPreview(json.RawMessage(`"not an object"`)); string(p) != "{}" {
		t.Fatalf("preview of a JSON string %s, want {}", p)
	}
}

// runBashCancelled runs a long bash call whose context is cancelled with
// cause after 300 ms, and checks that the command was killed.
func runBashCancelled(t *testing.T, cause error) (*fixture, RunToolResult, error) {
	t.Helper()
	f, ws := toolFixture(t, call("c1", "bash", `{"command":"echo started; sleep 30; echo late > late.txt"}`))
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	f.env.SetTestTimeout(20 * time.Second)
	f.env.SetWorkerOptions(workerOptionsWithContext(ctx))
	time.AfterFunc(300*time.Millisecond, func() { cancel(cause) })
	start := time.Now()
	res, err := f.runTool(t, ws, "c1", "bash", "r1")
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the cancelled call took %v: the command was not killed", d)
	}
	if _, serr := os.Stat(filepath.Join(ws, "late.txt")); serr == nil {
		t.Fatal("late.txt exists: the command kept running")
	}
	return f, res, err
}

// An abort (the workflow asked: the SDK cancels the context with a
// CanceledError) kills the command and records the aborted result.
func TestRunTool_AbortKillsTheCommandAndRecordsIt(t *testing.T) {
	f, _, err := runBashCancelled(t, temporal.NewCanceledError())
	if err == nil {
		t.Fatal("an aborted call reported success")
	}
	sess, _ := f.store.Load("s1")
	e, ok := sess.Get("r1")
	if !ok || e.Message == nil || !e.Message.IsError || !strings.Contains(strings.ToLower(e.Message.Text()), "abort") {
		t.Fatalf("result entry %+v, want the aborted result", e.Message)
	}
}

// Issue 15 item 4: a cancel nobody asked for (failing heartbeats, worker
// shutdown, deadline) kills the command too, but writes no result: the
// workflow's record of the lost call (the command's outcome unknown)
// is the one that stands, not "aborted".
func TestRunTool_CancelNobodyAskedForKillsTheCommandAndWritesNothing(t *testing.T) {
	for name, cause := range cancelsNobodyAskedFor {
		t.Run(name, func(t *testing.T) {
			f, _, err := runBashCancelled(t, cause)
			if err == nil {
				t.Fatal("a cancelled call reported success")
			}
			sess, _ := f.store.Load("s1")
			if e, ok := sess.Get("r1"); ok {
				t.Fatalf("result entry %+v written, want none (nobody aborted the call)", e.Message)
			}
		})
	}
}

// Issue 20 item 5, spec 13.4.7: a call cut without an abort (the worker's
// stop channel still open: failing heartbeats, a deadline) fails with the
// typed ErrTypeCallCut naming the cause, never a bare "context canceled"
// that the workflow would pass on to the model as the call's failure.
func TestRunTool_CancelNobodyAskedForIsATypedCut(t *testing.T) {
	for name, cause := range cancelsNobodyAskedFor {
		t.Run(name, func(t *testing.T) {
			_, _, err := runBashCancelled(t, cause)
			var appErr *temporal.ApplicationError
			if !errors.As(err, &appErr) || appErr.Type() != ErrTypeCallCut || appErr.NonRetryable() ||
				!strings.HasPrefix(appErr.Message(), "bash was cut by its worker without an abort: ") {
				t.Fatalf("error %v, want a retryable %s naming the cut", err, ErrTypeCallCut)
			}
		})
	}
}
