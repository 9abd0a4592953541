package faults

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/testserver"
)

// issue 7: signals with wrong payloads, sent by name with the plain client
// as `temporal workflow signal` would, while a prompt waits to retry. Each
// is validated and ignored with a logged warning or error: no workflow
// task fails, auto-retry stays on, and the prompt completes with the
// fault-free event sequence.
func TestFaults_SignalsWithWrongPayloadsAreIgnoredWithoutFailingTheWorkflow(t *testing.T) {
	skipShort(t)
	e := newEnv(t, sharedAddress(t))
	e.s.Retry.BaseDelayMs = 1500
	// The worker logs to a buffer, to check the warnings.
	logs := &syncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wc, err := client.Dial(ctx, e.s, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	w, err := app.NewWorker(wc, e.s)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	run := e.prompt("badsig", e503, e503)
	e.waitFor("badsig", time.Minute, func(ev agent.Event) bool { return ev.Type == agent.EventAutoRetryStart })
	cases := []struct {
		name, signal string
		payload      any
	}{
		{"a string", agent.SignalSetAutoRetry, "false"},
		{"a number", agent.SignalSetAutoRetry, 0},
		{"a bare boolean", agent.SignalSetAutoRetry, false},
		{"a list", agent.SignalSetAutoRetry, []bool{false}},
		{"enabled as a string", agent.SignalSetAutoRetry, map[string]any{"enabled": "false"}},
		{"enabled as a number", agent.SignalSetAutoRetry, map[string]any{"enabled": 0}},
		{"enabled null", agent.SignalSetAutoRetry, map[string]any{"enabled": nil}},
		{"no enabled field", agent.SignalSetAutoRetry, map[string]any{"enable": false}},
		{"no payload", agent.SignalSetAutoRetry, nil},
		{"binary bytes", agent.SignalSetAutoRetry, []byte{0xff, 0x00, 0xfe}},
		{"a 256 KiB string", agent.SignalSetAutoRetry, strings.Repeat("x", 256<<10)},
		{"misspelt signal name", "set-auto-retry", map[string]any{"enabled": false}},
	}
	for _, tc := range cases {
		if err := e.c.SignalWorkflow(context.Background(), run.GetID(), "", tc.signal, tc.payload); err != nil {
			t.Fatalf("signal %s (%s): %v", tc.signal, tc.name, err)
		}
	}
	st, err := e.k.State(context.Background(), "badsig")
	if err != nil || !st.AutoRetryEnabled {
		t.Fatalf("state after the bad signals: %+v %v; auto-retry must stay on", st, err)
	}
	res, err := e.result(run, time.Minute)
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	checkEvents(t, e.events("badsig"), expectedEvents([]string{e503, e503, ""}, 1500, 3))

	hist := history(t, e.c, run.GetID(), run.GetRunID())
	if f := workflowTaskFailures(hist); len(f) > 0 {
		t.Fatalf("workflow tasks failed: %v", f)
	}
	signaled := 0
	for _, ev := range hist {
		if ev.GetWorkflowExecutionSignaledEventAttributes() != nil {
			signaled++
		}
	}
	if signaled != len(cases) {
		t.Fatalf("history has %d signals, want the %d sent", signaled, len(cases))
	}
	for _, want := range []string{
		`set_auto_retry ignored: want {\"enabled\": true|false}`,
		"Corrupted signal received on channel set_auto_retry",
		"Workflow has unhandled signals",
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("worker log lacks %q:\n%s", want, logs.String())
		}
	}
}

// issue 7: unknown session ids at a real server. The starter's commands
// that need a prompt say which session has none, in one line, exit 2.
func TestFaults_UnknownSessionIDsAtTheServerExit2WithOneLine(t *testing.T) {
	skipShort(t)
	addr := sharedAddress(t)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"state", []string{"state", "--session", "nosuch"}, "no prompt in session nosuch"},
		{"events", []string{"events", "--session", "nosuch"}, "no prompt in session nosuch"},
		{"events --follow", []string{"events", "--follow", "--session", "nosuch"}, "no prompt in session nosuch"},
		{"abort-retry", []string{"abort-retry", "--session", "nosuch"}, "no running prompt in session nosuch"},
		{"abort", []string{"abort", "--session", "nosuch"}, "no running prompt in session nosuch"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"DURABLE_AGENT_HOME": t.TempDir(), "TEMPORAL_ADDRESS": addr}
			testserver.SetEnv(t, env)
			var stdout, stderr bytes.Buffer
			code := cli.Main(tc.args, cli.Env{Stdout: &stdout, Stderr: &stderr, Stdin: strings.NewReader("")})
			t.Logf("exit %d: %s", code, strings.TrimSpace(stderr.String()))
			if code != cli.ExitUsage || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("exit %d, stderr %q; want 2 and one line with %q", code, stderr.String(), tc.want)
			}
		})
	}
}
