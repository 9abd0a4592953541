package integration

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
)

// Issue 37 item 4 (docs/spec.md 15.3.2), with a real worker and
// bubblewrap: under "deny read path:**/.env" a scripted model links an
// innocent name to .env with bash, reads the link, greps the link and
// greps the workspace. The read and the grep of the link are refused in
// one line naming the rule; the grep of the workspace finds the other
// file and says it passed over one; the secret of .env reaches no tool
// result, event, session file or history.
func TestIntegration_PolicyPathsResolved(t *testing.T) {
	const secret = "PW=hunter2-Zq81xTk4"
	e := sandboxEnv(t)
	ws := t.TempDir()
	for name, text := range map[string]string{".env": secret + "\n", "README": "set PW= in .env\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.s.Tools.Policy = []string{"deny read path:**/.env"}
	e.startWorker()

	call := func(tool string, args map[string]any) string {
		b, _ := json.Marshal(args)
		return "tool:" + tool + " " + string(b)
	}
	in := client.PromptInput(e.s, "paths", "look for the password")
	in.Workspace = ws
	in.Model.Faults = []string{
		bashCall("ln -s .env notes.txt && echo linked"),
		call("read", map[string]any{"path": "notes.txt"}),
		call("grep", map[string]any{"pattern": "PW=", "path": "notes.txt"}),
		call("grep", map[string]any{"pattern": "PW="}),
		"text:done",
	}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	evs := e.events("paths")
	var results []string
	for _, ev := range evs {
		if ev.Type == agent.EventToolExecutionEnd && ev.ToolResult != nil {
			text := ""
			for _, b := range ev.ToolResult.Content {
				text += b.Text
			}
			results = append(results, text)
		}
	}
	if len(results) != 4 || !strings.Contains(results[0], "linked") {
		t.Fatalf("tool results %q: want 4, the link made", results)
	}
	const rule = `which the approval policy denies (rule 1 "deny read path:**/.env")`
	if want := "read: notes.txt resolves to .env, " + rule; results[1] != want {
		t.Errorf("read of the link: %q\nwant %q", results[1], want)
	}
	if want := "grep: notes.txt resolves to .env, " + rule; results[2] != want {
		t.Errorf("grep of the link: %q\nwant %q", results[2], want)
	}
	if !strings.Contains(results[3], "README:1: set PW= in .env") ||
		!strings.Contains(results[3], "[1 file passed over: a path rule of the approval policy covers it]") {
		t.Errorf("grep of the workspace: %q, want README's line and one file passed over", results[3])
	}
	all, _ := json.Marshal(evs)
	blobs := map[string][]byte{
		"events":        all,
		"session files": readTree(t, filepath.Join(e.dataDir, "sessions")),
		"history":       history(t, e, run.GetID(), run.GetRunID()).all,
	}
	for name, blob := range blobs {
		if strings.Contains(string(blob), "hunter2") {
			t.Errorf("%s hold the secret of .env", name)
		}
	}
}
