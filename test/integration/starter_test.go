package integration

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"

	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/testserver"
	"github.com/durableagent/durableagent/retry"
)

// starter runs the starter's command tree against the env's server.
func (e *env) starter(args ...string) (int, string, string) {
	return e.starterWith(nil, args...)
}

// starterWith is starter with more environment variables.
func (e *env) starterWith(more map[string]string, args ...string) (int, string, string) {
	vars := map[string]string{
		"DURABLE_AGENT_HOME":               e.dataDir,
		"TEMPORAL_ADDRESS":                 e.s.Temporal.Address,
		"DURABLE_AGENT_TEMPORAL_TASKQUEUE": e.s.Temporal.TaskQueue,
		"DURABLE_AGENT_RETRY_BASEDELAYMS":  "300",
	}
	for k, v := range more {
		vars[k] = v
	}
	testserver.SetEnv(e.t, vars)
	var out, errb bytes.Buffer
	code := cli.Main(args, cli.Env{Stdout: &out, Stderr: &errb})
	return code, out.String(), errb.String()
}

// The starter's prompt command prints the retry events live, the answer,
// and exits 0; a failing prompt exits 1; signalling a session with no
// running prompt is a one-line error with exit code 2.
func TestIntegration_StarterCommands(t *testing.T) {
	e := newEnv(t)
	e.startWorker()

	code, out, stderr := e.starter("prompt", "--session", "cli", "--fault", e503, "hello there")
	if code != cli.ExitOK {
		t.Fatalf("prompt exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	for _, want := range []string{"✗ model error: 503 Service Unavailable", "Retrying (1/3) in 1s…", "Retry succeeded on attempt 1", "Scripted reply to: hello there"} {
		if !strings.Contains(out, want) {
			t.Fatalf("prompt output lacks %q:\n%s", want, out)
		}
	}

	code, out, _ = e.starter("prompt", "--session", "cli2", "--json", "--fault", "401 invalid x-api-key", "hi")
	if code != cli.ExitFailed || !strings.Contains(out, `"type":"prompt_end"`) || !strings.Contains(out, `"status":"failed"`) {
		t.Fatalf("failing prompt: exit %d\n%s", code, out)
	}

	code, _, stderr = e.starter("abort-retry", "--session", "cli")
	if code != cli.ExitUsage || !strings.Contains(stderr, "no running prompt in session cli") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("abort-retry with nothing running: exit %d, stderr %q", code, stderr)
	}

	code, out, _ = e.starter("state", "--session", "cli", "--json")
	if code != cli.ExitOK || !strings.Contains(out, `"autoRetryEnabled":true`) || !strings.Contains(out, `"isRetrying":false`) {
		t.Fatalf("state: exit %d %s", code, out)
	}
	code, out, _ = e.starter("events", "--session", "cli", "--json")
	if code != cli.ExitOK || strings.Count(out, "\n") != 17 || !strings.Contains(out, `"type":"auto_retry_end","seq":16`) {
		t.Fatalf("events: exit %d\n%s", code, out)
	}
}

// DESIGN: a session runs one prompt at a time; a second prompt while one
// runs is a clear "session busy" error, and the running one is untouched.
func TestIntegration_SecondPromptInSessionIsBusy(t *testing.T) {
	e := newEnv(t)
	e.s.Retry.BaseDelayMs = 60_000
	e.startWorker()
	run := e.prompt("busy", e503)
	e.waitEvent("busy", 30*time.Second, isType(agent.EventAutoRetryStart))
	code, _, stderr := e.starter("prompt", "--session", "busy", "second prompt")
	if code != cli.ExitUsage || !strings.Contains(stderr, "session busy") || !strings.Contains(stderr, "session busy is running a prompt") {
		t.Fatalf("second prompt: exit %d, stderr %q", code, stderr)
	}
	if err := e.k.AbortRetry(context.Background(), "busy"); err != nil {
		t.Fatal(err)
	}
	if res, _ := e.result(run); !strings.HasPrefix(res.Error, retry.CancelledMessage) {
		t.Fatalf("first prompt %+v", res)
	}
	// Once it has ended, the session takes a new prompt.
	code, out, stderr := e.starter("prompt", "--session", "busy", "third prompt")
	if code != cli.ExitOK || !strings.Contains(out, "Scripted reply to: third prompt") {
		t.Fatalf("prompt after the first ended: exit %d\n%s\n%s", code, out, stderr)
	}
}

// `starter compact` whose summary call fails once prints the retry on
// stderr while it waits (with the abort-retry hint) and its success, then
// the result on stdout, and exits 0.
func TestIntegration_StarterCompactPrintsItsRetries(t *testing.T) {
	e := compactableSession(t, "compact-cli")
	code, out, stderr := e.starterWith(map[string]string{"DURABLE_AGENT_COMPACTION_KEEPRECENTTOKENS": "10"},
		"compact", "--session", "compact-cli", "--fault", e503)
	if code != cli.ExitOK {
		t.Fatalf("compact: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	for _, want := range []string{"↻ Retrying (1/3) in ", "starter abort-retry --session compact-cli", "Retry succeeded on attempt 1"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(out, "Retrying") || !strings.Contains(strings.ToLower(out), "compact") {
		t.Errorf("stdout:\n%s", out)
	}
}
