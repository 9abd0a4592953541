package activities

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
		Tools: ToolsInput{Enabled: []string{"read", "write", "edit", "bash", "grep", "find", "ls"}}})
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
	p, invalid := ArgsPreview(args)
	var m map[string]any
	if invalid || json.Unmarshal(p, &m) != nil || len(p) > 400 || m["path"] != "a.txt" {
		t.Fatalf("preview %s (invalid %t)", p, invalid)
	}
	if _, invalid := ArgsPreview(json.RawMessage(`"not an object"`)); !invalid {
		t.Fatal("a JSON string is reported as valid arguments")
	}
}
