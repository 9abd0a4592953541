package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/internal/client"
)

// Issue 37 item 6a: a key that a command prints in two writes, a second
// and a half apart, is redacted whole in the tool result the model reads,
// the session file and the live output a follower sees: no part of it
// longer than its family prefix reaches any of them. Real worker, real
// bubblewrap. Spec 14.4.4.
func TestRedact_KeyPrintedInTwoWritesIsRedactedWhole(t *testing.T) {
	const (
		head, tail = "sk-ant-REDACT-PRO", "BE-0123456789abcdef"
		key        = head + tail
	)
	e := sandboxEnv(t)
	store, err := auth.OpenFile(filepath.Join(e.dataDir, auth.FileName), auth.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Add(auth.Credential{ID: "split-key", Provider: "anthropic", Secret: key}); err != nil {
		t.Fatal(err)
	}
	e.startWorker()

	in := client.PromptInput(e.s, "split-key", "print it")
	in.Workspace = t.TempDir()
	// The key is in a workspace file, so the model's command (which the
	// session file keeps) does not spell it.
	if err := os.WriteFile(filepath.Join(in.Workspace, "k"), []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := fmt.Sprintf("echo start; head -c %d k; sleep 1.5; tail -c +%d k; echo; echo END-OF-CALL", len(head), len(head)+1)
	args, _ := json.Marshal(map[string]any{"command": cmd, "timeout": 60})
	in.Model.Faults = []string{"tool:bash " + string(args), "text:done"}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	// Follow the prompt as a user would, collecting the live tool output.
	var mu sync.Mutex
	var live []string
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	k := &client.Controller{Client: e.c, TaskQueue: e.s.Temporal.TaskQueue}
	if _, err := k.Follow(ctx, "split-key", "", 0, func(ev agent.Event) {
		if ev.Type == agent.EventToolExecutionUpdate && ev.PartialResult != nil {
			mu.Lock()
			for _, b := range ev.PartialResult.Content {
				live = append(live, b.Text)
			}
			mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("follow: %v", err)
	}
	res, err := e.result(run)
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	result := strings.Join(storedToolResults(t, e, "split-key"), "\n")
	if len(live) == 0 {
		t.Fatal("the follower saw no live output of the call")
	}
	if !strings.Contains(result, "END-OF-CALL") || !strings.Contains(result, "[redacted]") {
		t.Fatalf("tool result %q: want the command's output with the key masked", result)
	}
	sessions := string(readTree(t, filepath.Join(e.dataDir, "sessions")))
	// Any 8 characters of the key after its family prefix "sk-ant-" is
	// a leak.
	for name, text := range map[string]string{"tool result": result, "session file": sessions, "live output": strings.Join(live, "\n")} {
		for i := len("sk-ant-"); i+8 <= len(key); i++ {
			if strings.Contains(text, key[i:i+8]) {
				t.Errorf("%s holds %q of the key: %.400q", name, key[i:i+8], text)
				break
			}
		}
	}
	t.Logf("live output: %q; result: %q", live, result)
}
