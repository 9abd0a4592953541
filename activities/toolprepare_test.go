package activities

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/tools"
)

// preparingRunner is tools.Local with a log of the hints it is given and
// of the workspace and environment of the commands it starts.
type preparingRunner struct {
	mu            sync.Mutex
	hints, starts []string
}

func (r *preparingRunner) Start(c tools.Command) (tools.Process, error) {
	r.mu.Lock()
	r.starts = append(r.starts, c.Dir+" "+strings.Join(c.Env, ","))
	r.mu.Unlock()
	return tools.Local.Start(c)
}
func (r *preparingRunner) FS() tools.FS { return tools.Local.FS() }
func (r *preparingRunner) Prepare(dir string, env []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hints = append(r.hints, dir+" "+strings.Join(env, ","))
}

// Issue 22: as a model call starts, the worker's runner is told that the
// answer's bash calls may follow, in the session's workspace with the
// environment RunTool gives them (a sandbox runner fills the workspace's
// pool of spares during the model's turn); not when bash is not offered,
// the session's tools run on another host, or the workspace is not one
// this worker runs tools in.
func TestCallModel_HintsTheToolRunnerOfTheComingBashCalls(t *testing.T) {
	for _, tc := range []struct {
		name    string
		offered []string
		host    string // the session's tool host; the worker's is "here"
		roots   bool   // tools.allowedRoots excludes the workspace
		want    bool
	}{
		{name: "bash offered", offered: []string{"read", "bash"}, want: true},
		{name: "bash offered, session held here", offered: []string{"bash"}, host: "here", want: true},
		{name: "no bash", offered: []string{"read", "grep"}},
		{name: "tools run on another host", offered: []string{"bash"}, host: "elsewhere"},
		{name: "workspace outside tools.allowedRoots", offered: []string{"bash"}, roots: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, scripted.New(scripted.Options{}))
			rn := &preparingRunner{}
			f.acts.ToolPolicy = ToolPolicy{Confine: true, Runner: rn}
			f.acts.ToolHost = "here"
			if tc.roots {
				f.acts.ToolPolicy.AllowedRoots = []string{t.TempDir()}
			}
			ws := t.TempDir()
			if _, err := f.store.InitHeader("s2", session.Header{Cwd: ws, Host: tc.host}); err != nil {
				t.Fatal(err)
			}
			user := agent.TextMessage(agent.RoleUser, "hello")
			if _, err := f.store.Append("s2", session.Entry{Type: session.TypeMessage, ID: "u1", Timestamp: time.Now(), Message: &user}); err != nil {
				t.Fatal(err)
			}
			in := input("m1")
			in.SessionID, in.Tools = "s2", tc.offered
			if res, err := f.call(t, in); err != nil || res.StopReason == agent.StopReasonError {
				t.Fatalf("model call: %+v %v", res, err)
			}
			if !tc.want {
				if len(rn.hints) > 0 {
					t.Fatalf("hints %q, want none", rn.hints)
				}
				return
			}
			// The hint names what the answer's bash call then runs with:
			// RunTool's workspace (BeginPrompt's, the header's) and env.
			f.env.RegisterActivityWithOptions(f.acts.RunTool, activityName(RunToolName))
			bc := call("c1", "bash", `{"command":"true"}`)
			m := agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonToolUse,
				Content: []agent.ContentBlock{{Type: "toolCall", ToolCall: &bc}}}
			if _, err := f.store.Append("s2", session.Entry{Type: session.TypeMessage, ID: "a1", ParentID: "m1", Timestamp: time.Now(), Message: &m}); err != nil {
				t.Fatal(err)
			}
			if _, err := f.env.ExecuteActivity(RunToolName, RunToolInput{SessionID: "s2", AssistantEntryID: "a1", ToolCallID: "c1",
				ToolName: "bash", ResultEntryID: "r1", ParentID: "a1", Workspace: ws, Tools: ToolsInput{Enabled: []string{"bash"}}}); err != nil {
				t.Fatal(err)
			}
			if len(rn.starts) != 1 || !slices.Equal(rn.hints, rn.starts) {
				t.Fatalf("hints %q, want one naming the bash call's workspace and environment %q", rn.hints, rn.starts)
			}
		})
	}
}
