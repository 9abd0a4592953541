package activities_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/auth"
)

const (
	envSecretName  = activities.TestEnvSecretName
	envSecretValue = activities.TestEnvSecretValue
)

// sseChunk is one Chat Completions stream chunk with a delta for choice 0.
func sseChunk(delta map[string]any, finish any) string {
	raw, _ := json.Marshal(map[string]any{"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "gpt-test",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
	return "data: " + string(raw) + "\n\n"
}

// toolCallsAnswer is a streamed answer asking for calls (name, arguments).
func toolCallsAnswer(calls ...[2]string) string {
	var b strings.Builder
	for i, c := range calls {
		b.WriteString(sseChunk(map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"index": i,
			"id": fmt.Sprintf("call_%d", i), "type": "function",
			"function": map[string]any{"name": c[0], "arguments": c[1]}}}}, nil))
	}
	b.WriteString(sseChunk(map[string]any{}, "tool_calls"))
	return b.String() + "data: [DONE]\n\n"
}

func jsonArgs(v map[string]any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Issue 20 item 4: tools that print the worker's secrets — bash reading
// the credential store, the worker's /proc/<pid>/environ and a file with
// the key, printing the key base64-encoded, a long output whose full text
// goes to a file in the workspace, read of auth.json, grep of the data
// directory — store and preview them redacted: the key and the withheld
// variable's value, raw or encoded, are in no Temporal payload, activity
// result, event, log line, the session file or the full-output file.
// Spec 14.4.4.
func TestSecrets_ToolOutputIsRedactedOfTheWorkersSecrets(t *testing.T) {
	var calls atomic.Int32
	var s *realStack
	var ws, authPath string
	leak := filepath.Join(t.TempDir(), "leak.txt") // outside the scanned data directory
	s = newRealStack(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		if calls.Add(1) > 1 {
			fmt.Fprint(w, sseChunk(map[string]any{"role": "assistant", "content": "done"}, "stop")+"data: [DONE]\n\n")
			return
		}
		short := fmt.Sprintf(`grep -o 'sk-proj[^"]*' %s; printf %%s "$(grep -o 'sk-proj[^"]*' %[1]s)" | base64 -w0; echo; cat %s; tr '\0' '\n' < /proc/$PPID/environ | grep %s`,
			authPath, leak, envSecretName)
		long := fmt.Sprintf(`seq 1 20000; cat %s; cat %s`, authPath, leak)
		fmt.Fprint(w, toolCallsAnswer(
			[2]string{"bash", jsonArgs(map[string]any{"command": short})},
			[2]string{"bash", jsonArgs(map[string]any{"command": long})},
			[2]string{"read", jsonArgs(map[string]any{"path": authPath})},
			[2]string{"grep", jsonArgs(map[string]any{"pattern": "sk-proj", "path": s.dataDir})},
		))
	}, 50*time.Millisecond)
	authPath = filepath.Join(s.dataDir, auth.FileName)
	ws = filepath.Join(s.dataDir, "ws") // scanned with the data directory
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(leak, []byte("copied: "+testKey+" and "+envSecretValue+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	in := promptInput(0)
	in.Workspace = ws
	in.Tools.Enabled = []string{"bash", "read", "grep"}
	res, evs, err := s.run(t, in)
	if err != nil {
		t.Fatalf("prompt failed: %v", err)
	}
	if res.Text != "done" || calls.Load() != 2 {
		t.Fatalf("result %+v after %d model calls, want the tools run and then the answer", res, calls.Load())
	}

	// The commands ran and printed the secrets, which arrived masked.
	sess, lerr := s.store.Load(in.SessionID)
	if lerr != nil {
		t.Fatal(lerr)
	}
	var results []string
	for _, e := range sess.Entries {
		if e.Message != nil && e.Message.Role == agent.RoleToolResult {
			results = append(results, e.Message.Text())
		}
	}
	if len(results) != 4 {
		t.Fatalf("%d tool results in the session, want 4: %q", len(results), results)
	}
	for i, text := range results {
		if !strings.Contains(text, "[redacted]") {
			t.Errorf("tool result %d has no redaction marker (did the secret reach it?): %.400s", i, text)
		}
	}
	if !strings.Contains(results[0], envSecretName+"=[redacted]") {
		t.Errorf("the worker's environment was not read through /proc, or its value not masked: %.400s", results[0])
	}
	full := fullOutputFiles(t, ws)
	if len(full) == 0 {
		t.Fatalf("no full-output file under %s: the long command was not truncated", ws)
	}
	for _, f := range full {
		b, _ := os.ReadFile(f)
		if !bytes.Contains(b, []byte("[redacted]")) || !bytes.Contains(b, []byte("\n19999\n")) {
			t.Errorf("full output %s lacks the masked key or the output before it: %.200s", f, b[max(0, len(b)-400):])
		}
	}

	scanForKey(t, s, evs, nil)
	for name, blob := range map[string][]byte{"events": mustJSON(evs), "activity input/output": bytes.Join(s.captured, nil),
		"temporal payloads": bytes.Join(s.payloads.all(), nil), "session": sessionFile(t, s.dataDir)} {
		for _, n := range []string{envSecretValue, base64.StdEncoding.EncodeToString([]byte(envSecretValue))} {
			if bytes.Contains(blob, []byte(n)) {
				t.Errorf("%s contains the withheld variable's value %q", name, n)
			}
		}
	}
	for _, f := range full {
		b, _ := os.ReadFile(f)
		for _, n := range []string{envSecretValue, testKey} {
			if bytes.Contains(b, []byte(n)) {
				t.Errorf("full output %s contains %q", f, n)
			}
		}
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// fullOutputFiles are the files bash kept the full output of truncated
// commands in.
func fullOutputFiles(t *testing.T, ws string) []string {
	t.Helper()
	// Full outputs are kept per session: .durable-agent/tmp/<session>/.
	files, _ := filepath.Glob(filepath.Join(ws, ".durable-agent", "tmp", "*", "*.log"))
	return files
}

// sessionFile is every session file of the data directory, joined.
func sessionFile(t *testing.T, dataDir string) []byte {
	t.Helper()
	var all []byte
	_ = filepath.Walk(filepath.Join(dataDir, "sessions"), func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(path)
			all = append(all, b...)
		}
		return nil
	})
	if len(all) == 0 {
		t.Fatal("no session file")
	}
	return all
}
