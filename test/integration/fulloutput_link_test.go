package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
)

// Issue 37 item 3: a model that puts a link (or a FIFO) where the worker
// keeps the full outputs of truncated commands
// (<workspace>/.durable-agent/tmp/<session>) does not make the worker
// write, prune or delete outside the workspace. Each case plants its
// thing with one bash call in the real sandbox; the next call prints more
// than the tool shows; a directory outside the workspace, holding 25 old
// full outputs that pruning would remove, is left exactly as it was, also
// after `starter session delete`; the prompt completes, and the second
// call's result says where its full output is or why it could not be
// saved. Spec 14.3.3.
func TestFullOutput_PlantedLinkLeadsNowhere(t *testing.T) {
	e := sandboxEnv(t)
	e.startWorker()
	for _, tc := range []struct {
		name  string
		plant string // a shell command; %[1]s is the session, %[2]s the outside directory
		// notice is what the truncated call's notice says after its
		// line counts; %s is the session's output directory.
		notice string
	}{
		{"session dir a link out", "mkdir -p .durable-agent/tmp && rm -rf .durable-agent/tmp/%[1]s && ln -s %[2]s .durable-agent/tmp/%[1]s", outsideNotice},
		{"tmp a link out", "rm -rf .durable-agent/tmp && ln -s %[2]s .durable-agent/tmp", outsideNotice},
		{"durable-agent a link out", "rm -rf .durable-agent && ln -s %[2]s .durable-agent", outsideNotice},
		{"gitignore a dangling link out", "rm -rf .durable-agent && mkdir .durable-agent && ln -s %[2]s/planted .durable-agent/.gitignore", "Full output: %s/bash-"},
		{"session dir a FIFO", "mkdir -p .durable-agent/tmp && rm -rf .durable-agent/tmp/%[1]s && mkfifo .durable-agent/tmp/%[1]s", "Full output could not be saved: %s is not a directory]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			session := "link-" + strings.NewReplacer(" ", "-").Replace(tc.name)
			outside := t.TempDir()
			for i := range 25 {
				if err := os.WriteFile(filepath.Join(outside, fmt.Sprintf("bash-old%02d.log", i)), []byte("keep me\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			before := listDir(t, outside)
			ws := t.TempDir()
			in := client.PromptInput(e.s, session, "print a lot")
			in.Workspace = ws
			plant, _ := json.Marshal(map[string]string{"command": fmt.Sprintf(tc.plant, session, outside) + " && ls -la .durable-agent"})
			long, _ := json.Marshal(map[string]string{"command": "seq 1 5000; echo END-OF-CALL"})
			in.Model.Faults = []string{"tool:bash " + string(plant), "tool:bash " + string(long), "text:done"}
			run, err := e.k.StartPrompt(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
				t.Fatalf("prompt: %+v %v", res, err)
			}
			results := storedToolResults(t, e, session)
			if len(results) != 2 || !strings.Contains(results[1], "END-OF-CALL") {
				t.Fatalf("tool results %q", results)
			}
			notice := results[1][strings.LastIndex(results[1], "\n\n[")+2:]
			want := fmt.Sprintf(tc.notice, filepath.Join(ws, ".durable-agent", "tmp", session))
			if !strings.Contains(notice, want) {
				t.Errorf("the truncated call's notice %q, want it to say %q", notice, want)
			}
			t.Logf("plant: %.300s\nnotice: %s", results[0], notice)
			if code, out, stderr := e.starter("session", "delete", "--session", session); code != cli.ExitOK {
				t.Fatalf("session delete: exit %d\nstdout %s\nstderr %s", code, out, stderr)
			}
			if after := listDir(t, outside); !slices.Equal(after, before) {
				t.Fatalf("the directory outside the workspace changed:\nbefore %q\nafter  %q", before, after)
			}
		})
	}
}

// outsideNotice is the notice of a full output that a link would have led
// out of the workspace.
const outsideNotice = "Full output could not be saved: open %s: a symbolic link in the path leads outside the workspace]"

// storedToolResults are the texts of the session's tool results, as the
// session file keeps them and the model reads them.
func storedToolResults(t *testing.T, e *env, id string) []string {
	t.Helper()
	store, err := session.Open(filepath.Join(e.dataDir, "sessions"))
	if err != nil {
		t.Fatal(err)
	}
	sess, err := store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, en := range sess.Entries {
		if en.Message != nil && en.Message.Role == agent.RoleToolResult {
			out = append(out, en.Message.Text())
		}
	}
	return out
}

// listDir is every path under dir, relative to it, with its size.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		out = append(out, fmt.Sprintf("%s %d", rel, info.Size()))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
