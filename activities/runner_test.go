package activities

import (
	"context"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/tools"
)

// recordingRunner is tools.Local behind a log of the commands it starts
// and the files it opens.
type recordingRunner struct {
	mu  sync.Mutex
	ops []string
}

func (r *recordingRunner) add(op string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, op)
}

func (r *recordingRunner) saw(op string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.ops, op)
}

func (r *recordingRunner) Start(c tools.Command) (tools.Process, error) {
	r.add("start " + c.Script)
	return tools.Local.Start(c)
}

func (r *recordingRunner) FS() tools.FS { return recordingFS{tools.Local.FS(), r} }

type recordingFS struct {
	tools.FS
	r *recordingRunner
}

func (f recordingFS) OpenRegular(name string) (io.ReadCloser, fs.FileInfo, error) {
	f.r.add("open " + name)
	return f.FS.OpenRegular(name)
}

// The worker's tool runner (ToolPolicy.Runner) runs the model's tool calls
// and the user's bash: where a sandbox plugs in.
func TestToolPolicyRunner_RunsTheModelsToolsAndTheUsersBash(t *testing.T) {
	rec := &recordingRunner{}
	f, ws := toolFixture(t, call("c1", "bash", `{"command":"echo from-model > m.txt"}`), call("c2", "read", `{"path":"m.txt"}`))
	f.acts.ToolPolicy.Runner = rec
	if res, err := f.runTool(t, ws, "c1", "bash", "r1"); err != nil || res.IsError {
		t.Fatalf("bash: %+v %v", res, err)
	}
	if res, err := f.runTool(t, ws, "c2", "read", "r2"); err != nil || res.IsError || !strings.Contains(res.Preview, "from-model") {
		t.Fatalf("read: %+v %v", res, err)
	}
	if !rec.saw("start echo from-model > m.txt") || !slices.ContainsFunc(rec.ops, func(op string) bool { return strings.HasSuffix(op, "/m.txt") && strings.HasPrefix(op, "open ") }) {
		t.Fatalf("the model's calls bypassed ToolPolicy.Runner: %q", rec.ops)
	}

	store, ws2 := userBashStore(t)
	acts := &Activities{Sessions: store, HeartbeatInterval: 50 * time.Millisecond, ToolPolicy: ToolPolicy{Runner: rec}}
	res, err := userBashWith(t, acts, context.Background(), UserBashInput{SessionID: "s1", EntryID: "b1", Command: "echo from-user", Workspace: ws2})
	if err != nil || res.ExitCode == nil || *res.ExitCode != 0 || !strings.Contains(res.Preview, "from-user") {
		t.Fatalf("user bash: %+v %v", res, err)
	}
	if !rec.saw("start echo from-user") {
		t.Fatalf("the user's bash bypassed ToolPolicy.Runner: %q", rec.ops)
	}
}
