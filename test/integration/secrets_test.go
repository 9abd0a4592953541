package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/settings"
)

// Issue 20 item 4 on the real server, with the worker in its own process:
// a bash call that prints the credential store's key (raw and base64) and
// reads the worker's /proc/<pid>/environ leaves neither the key nor the
// worker's withheld variable in the session file, the events or the
// workflow's Temporal history. The worker is non-dumpable: a process of
// its user (the command) cannot read its environment; root can, and then
// the value arrives masked.
// Spec 14.4.4.
func TestIntegration_BashPrintingTheWorkersSecretsStoresThemRedacted(t *testing.T) {
	const (
		key      = "sk-it-Zq8Rw3Lm5Tx7Vb2Nc4Kd6Hp"
		envName  = "DA_IT_SERVICE_TOKEN"
		envValue = "svc-it-Yt6Gh2Jk8Lm4Pq0Rs"
	)
	e := newEnv(t)
	store, err := auth.OpenFile(filepath.Join(e.dataDir, auth.FileName), auth.FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Add(auth.Credential{ID: "it-key", Provider: "openai", Secret: key}); err != nil {
		t.Fatal(err)
	}
	t.Setenv(envName, envValue) // in the worker process's initial environment
	// What redaction does for a command that can read them: the sandbox
	// (TestSandbox_*) keeps them out of its reach.
	t.Setenv(envSandboxMode, settings.SandboxOff)
	e.spawnWorker()

	ws := t.TempDir()
	in := client.PromptInput(e.s, "secrets", "show me the keys")
	in.Workspace = ws
	cmd := fmt.Sprintf(`grep -o 'sk-it[^"]*' %s; grep -o 'sk-it[^"]*' %[1]s | tr -d '\n' | base64; tr '\0' '\n' < /proc/$PPID/environ | grep %s; echo end`,
		filepath.Join(e.dataDir, auth.FileName), envName)
	args, _ := json.Marshal(map[string]string{"command": cmd})
	in.Model.Faults = []string{"tool:bash " + string(args), "text:done"}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.result(run)
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("result %+v %v", res, err)
	}

	sessions := readTree(t, filepath.Join(e.dataDir, "sessions"))
	var output string
	for _, line := range strings.Split(string(sessions), "\n") {
		if strings.Contains(line, `"toolResult"`) {
			output = line
		}
	}
	if strings.Count(output, "[redacted]") < 2 || !strings.Contains(output, "end") {
		t.Errorf("the command's stored output lacks the masked key and its base64: %.600s", output)
	}
	if os.Geteuid() == 0 {
		if !strings.Contains(output, envName+"=[redacted]") {
			t.Errorf("as root the worker's environ is readable; its withheld variable should arrive masked: %.600s", output)
		}
	} else if !strings.Contains(output, "Permission denied") {
		t.Errorf("a process of the worker's user read the worker's environ (the worker is dumpable): %.600s", output)
	}

	evs, _ := json.Marshal(e.events("secrets"))
	h := history(t, e, run.GetID(), run.GetRunID())
	needles := []string{key, base64.StdEncoding.EncodeToString([]byte(key)), envValue}
	for name, blob := range map[string][]byte{"session file": sessions, "events": evs, "history": h.all} {
		for _, n := range needles {
			if bytes.Contains(blob, []byte(n)) {
				t.Errorf("%s contains %q", name, n)
			}
		}
	}
	if !bytes.Contains(evs, []byte("[redacted]")) || !bytes.Contains(h.all, []byte("[redacted]")) {
		t.Errorf("the tool's preview with the masked key is missing from the events or the history")
	}
}

// readTree is every file under dir, joined.
func readTree(t *testing.T, dir string) []byte {
	t.Helper()
	var all []byte
	_ = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(path)
			all = append(all, b...)
		}
		return nil
	})
	if len(all) == 0 {
		t.Fatalf("no file under %s", dir)
	}
	return all
}
