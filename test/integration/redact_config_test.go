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

// Issue 37 item 6b: only secrets are redacted. With the worker's
// configuration in its environment (DURABLE_AGENT_MODEL_PROVIDER=anthropic,
// a model name, a loopback base URL: withheld from bash, but no secrets)
// and a provider key, a source file the model reads with bash and with
// read keeps the provider, the model and the URL word for word, and the
// key arrives masked. Real worker, real bubblewrap. Spec 14.4.4.
func TestRedact_ConfigurationIsNoSecret(t *testing.T) {
	const (
		provider = "anthropic"
		model    = "claude-sonnet-4-5-20250929"
		baseURL  = "http://127.0.0.1:8089/v1"
		key      = "sk-ant-cfg-Qw7Er5Ty3Ui9Op1As"
	)
	e := sandboxEnv(t)
	t.Setenv("DURABLE_AGENT_MODEL_PROVIDER", provider)
	t.Setenv("DURABLE_AGENT_MODEL_NAME", model)
	t.Setenv("ANTHROPIC_BASE_URL", baseURL)
	t.Setenv("ANTHROPIC_API_KEY", key)
	e.startWorker()

	in := client.PromptInput(e.s, "config-words", "read the client")
	in.Workspace = t.TempDir()
	src := "// The " + provider + " client: model " + model + " at " + baseURL + ".\nconst key = \"" + key + "\"\n"
	if err := os.WriteFile(filepath.Join(in.Workspace, "client.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	bash, _ := json.Marshal(map[string]string{"command": "cat client.go"})
	read, _ := json.Marshal(map[string]string{"path": "client.go"})
	in.Model.Faults = []string{"tool:bash " + string(bash), "tool:read " + string(read), "text:done"}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	results := storedToolResults(t, e, "config-words")
	if len(results) != 2 {
		t.Fatalf("tool results %q, want bash's and read's", results)
	}
	want := "// The " + provider + " client: model " + model + " at " + baseURL + ".\nconst key = \"[redacted]\""
	for i, r := range results {
		if !strings.Contains(r, want) {
			t.Errorf("tool result %d:\n%s\nwant it to hold\n%s", i, r, want)
		}
	}
}
