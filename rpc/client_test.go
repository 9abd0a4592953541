package rpc_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/rpcserver"
	"github.com/durableagent/durableagent/internal/rpcserver/rpcfake"
	"github.com/durableagent/durableagent/rpc"
)

// childEnv names the scenario the test binary serves when it runs as the
// RPC process (the client spawns this same binary instead of `starter`).
const childEnv = "RPC_CLIENT_TEST_CHILD"

func TestMain(m *testing.M) {
	if scenario := os.Getenv(childEnv); scenario != "" {
		os.Exit(runChild(scenario))
	}
	os.Exit(m.Run())
}

// runChild serves RPC on stdin/stdout with the fake backend.
func runChild(scenario string) int {
	b := rpcfake.New("s1")
	srv := &rpcserver.Server{Backend: b, Logf: func(f string, a ...any) { fmt.Fprintf(os.Stderr, f+"\n", a...) }}
	switch scenario {
	case "wait":
		b.Script = rpcfake.RetryChain(rpcfake.Chain{Errors: []string{"503 Service Unavailable"}, BaseDelay: time.Hour})
	case "hang":
		srv.CommandTimeout = time.Second
		var once sync.Once
		b.StateHook = func(ctx context.Context) error {
			var err error
			once.Do(func() { <-ctx.Done(); err = ctx.Err() })
			return err
		}
	case "exit":
		fmt.Fprintln(os.Stderr, "starter rpc: cannot reach Temporal at 127.0.0.1:1 (namespace \"default\")")
		return 2
	default:
		fmt.Fprintf(os.Stderr, "unknown scenario %q\n", scenario)
		return 2
	}
	if err := srv.Serve(context.Background(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

func start(t *testing.T, scenario string, opts ...rpc.Option) *rpc.Client {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opts = append([]rpc.Option{rpc.WithCommand(exe), rpc.WithEnv(append(os.Environ(), childEnv+"="+scenario))}, opts...)
	c, err := rpc.Start(opts...)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Error responses come back as *CommandError naming the command.
func TestClient_ErrorResponsesAreCommandErrors(t *testing.T) {
	c := start(t, "wait")
	ctx := testCtx(t)
	cases := []struct {
		name    string
		do      func() error
		command string
		msg     string
	}{
		{"unknown type", func() error { _, err := c.Send(ctx, rpc.Command{Type: "reboot"}); return err }, "reboot", "Unknown command: reboot"},
		{"empty message", func() error { _, err := c.Prompt(ctx, " "); return err }, "prompt", `field "message" is empty`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var ce *rpc.CommandError
			if err := tc.do(); !errors.As(err, &ce) || ce.Command != tc.command || !strings.Contains(ce.Message, tc.msg) {
				t.Errorf("err = %v, want a CommandError for %s containing %q", err, tc.command, tc.msg)
			}
		})
	}
	// A second prompt while one runs: session busy.
	if _, err := c.Prompt(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	var ce *rpc.CommandError
	if _, err := c.Prompt(ctx, "two"); !errors.As(err, &ce) || !strings.HasPrefix(ce.Message, "session busy") {
		t.Errorf("second prompt: %v, want session busy", err)
	}
}

// set_auto_retry answers plain success and get_state shows it.
func TestClient_SetAutoRetryThenGetState(t *testing.T) {
	c := start(t, "wait")
	ctx := testCtx(t)
	if err := c.SetAutoRetry(ctx, false); err != nil {
		t.Fatal(err)
	}
	if err := c.SetAutoCompaction(ctx, false); err != nil {
		t.Fatal(err)
	}
	st, err := c.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.AutoRetryEnabled || st.AutoCompactionEnabled || st.IsRetrying || st.Status != rpc.StatusIdle {
		t.Errorf("state = %+v", st)
	}
	if msgs, err := c.GetMessages(ctx); err != nil || len(msgs) != 0 {
		t.Errorf("GetMessages = %v, %v", msgs, err)
	}
	var ce *rpc.CommandError
	if d, err := c.Compact(ctx, ""); !errors.As(err, &ce) || ce.Message != rpc.NothingToCompactError {
		t.Errorf("Compact = %+v, %v; want %q", d, err, rpc.NothingToCompactError)
	}
}

// Request timeouts: a request without an answer in time fails with
// context.DeadlineExceeded, and the client keeps working.
func TestClient_RequestTimeout(t *testing.T) {
	c := start(t, "hang", rpc.WithRequestTimeout(50*time.Millisecond))
	ctx := testCtx(t)
	if _, err := c.GetState(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("GetState = %v, want a deadline error", err)
	}
	c2 := start(t, "hang", rpc.WithRequestTimeout(0))
	// Without a client bound the server's own command timeout answers.
	var ce *rpc.CommandError
	if _, err := c2.GetState(ctx); !errors.As(err, &ce) || !strings.Contains(ce.Message, "deadline exceeded") {
		t.Fatalf("GetState = %v, want the server's timeout error", err)
	}
	if _, err := c2.GetState(ctx); err != nil {
		t.Errorf("GetState after a timeout: %v", err)
	}
}

// A process that cannot serve reports why: ErrExited with its status and
// the last line of its stderr.
func TestClient_ProcessExitIsReported(t *testing.T) {
	c := start(t, "exit")
	ctx := testCtx(t)
	_, err := c.GetState(ctx)
	if !errors.Is(err, rpc.ErrExited) || !strings.Contains(err.Error(), "exit status 2") || !strings.Contains(err.Error(), "cannot reach Temporal") {
		t.Errorf("GetState = %v, want ErrExited with status and stderr", err)
	}
	if err := c.Close(); !errors.Is(err, rpc.ErrExited) {
		t.Errorf("Close = %v, want ErrExited", err)
	}
}

// Issue 6: closing stdin makes the process detach and exit 0; a prompt
// still running is not ended (WaitForIdle reports the exit instead).
func TestClient_CloseDetachesAndExitsZero(t *testing.T) {
	var stderr bytes.Buffer
	var mu sync.Mutex
	c := start(t, "wait", rpc.WithStderr(lockedWriter{&mu, &stderr}))
	ctx := testCtx(t)
	started := make(chan struct{})
	var once sync.Once
	c.OnEvent(func(e agent.Event) {
		if e.Type == agent.EventAutoRetryStart {
			once.Do(func() { close(started) })
		}
	})
	if _, err := c.Prompt(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("no auto_retry_start")
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close = %v, want nil (exit 0)", err)
	}
	if _, err := c.WaitForIdle(ctx); !errors.Is(err, rpc.ErrExited) {
		t.Errorf("WaitForIdle after Close = %v, want ErrExited", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(stderr.String(), "keeps running in Temporal") {
		t.Errorf("stderr = %q, want the detach note", stderr.String())
	}
}

// WithTrace records the session as a transcript.
func TestClient_TraceRecordsBothDirections(t *testing.T) {
	var buf bytes.Buffer
	var mu sync.Mutex
	c := start(t, "wait", rpc.WithTrace(lockedWriter{&mu, &buf}))
	if err := c.AbortRetry(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := "> {\"id\":\"req-1\",\"type\":\"abort_retry\"}\n< {\"id\":\"req-1\",\"type\":\"response\",\"command\":\"abort_retry\",\"success\":true}\n"
	if buf.String() != want {
		t.Errorf("trace:\n%s\nwant:\n%s", buf.String(), want)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
