package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/settings"
)

func TestIsTerminal_DevNullIsNotATerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if term.IsTerminal(int(null.Fd())) {
		t.Fatalf("term.IsTerminal(%s) = true: --keep would default on with stdin from /dev/null", os.DevNull)
	}
}

// The demo runs with its own settings: what a user persisted for everyday
// use (set-auto-retry off writes retry.enabled: false; a shared worker's
// tools.allowedRoots; another provider) does not reach it, and it says so.
func TestDemoSettings_IgnorePersistedFile(t *testing.T) {
	home := t.TempDir()
	persisted := "retry:\n  enabled: false\ncompaction:\n  enabled: false\nmodel:\n  provider: openai\n  name: gpt-x\ntools:\n  allowedRoots: [/nonexistent]\n"
	if err := os.WriteFile(filepath.Join(home, settings.FileName), []byte(persisted), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		vars     map[string]string
		args     []string
		retry    bool
		baseMs   int64
		wantNote bool
	}{
		{"persisted file", nil, nil, true, 2000, true},
		{"a flag for this run", nil, []string{"--retry.baseDelayMs", "100"}, true, 100, true},
		{"a variable for this run", map[string]string{"DURABLE_AGENT_RETRY_ENABLED": "false"}, nil, false, 2000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]string{settings.EnvHome: home}
			for k, v := range tc.vars {
				vars[k] = v
			}
			fs := pflag.NewFlagSet("demo", pflag.ContinueOnError)
			settings.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			for k, v := range vars {
				t.Setenv(k, v) // the settings read the process environment (viper)
			}
			s, note, err := demoSettings(fs, cli.Env{})
			if err != nil {
				t.Fatal(err)
			}
			in := client.PromptInput(s, "demo-1", DemoMessage)
			if in.Retry.Enabled != tc.retry || in.Retry.BaseDelayMs != tc.baseMs || !in.Compaction.Enabled ||
				in.Model.Provider != "scripted" || len(s.Tools.AllowedRoots) != 0 {
				t.Fatalf("demo prompt input %+v, tools %+v: the persisted file leaked in", in, s.Tools)
			}
			if (note != "") != tc.wantNote || tc.wantNote && !strings.Contains(note, filepath.Join(home, settings.FileName)) {
				t.Fatalf("note %q", note)
			}
		})
	}
}

// End to end: with retry.enabled: false persisted, `starter demo` still
// retries its 503 and finishes the job.
func TestDemo_PersistedRetryOffStillRetries(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the embedded Temporal server")
	}
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, settings.FileName), []byte("retry:\n  enabled: false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	vars := map[string]string{
		settings.EnvHome:                   home,
		"DURABLE_AGENT_DEV_PORT":           strconv.Itoa(port),
		"DURABLE_AGENT_DEV_UI":             "false",
		"TEMPORAL_ADDRESS":                 "127.0.0.1:" + strconv.Itoa(port),
		"DURABLE_AGENT_TEMPORAL_TASKQUEUE": fmt.Sprintf("demo-test-%d", os.Getpid()),
	}
	for k, v := range vars {
		t.Setenv(k, v) // the settings read the process environment (viper)
	}
	var out, errb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code := runDemo(ctx, cli.Env{Stdout: &out, Stderr: &errb},
		[]string{"--keep=false", "--retry.baseDelayMs", "200"})
	if code != cli.ExitOK {
		t.Fatalf("demo exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"✗ model error: 503 Service Unavailable", "Retry succeeded on attempt 1", "  ✓ bash: PASS", "sh test.sh passes now."} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("demo output lacks %q:\n%s", want, out.String())
		}
	}
	if !strings.Contains(errb.String(), "runs with its own settings") {
		t.Fatalf("the demo did not say it leaves the settings file unread: %q", errb.String())
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
