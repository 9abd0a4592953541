package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/tools"
)

// serverEnv makes this test binary an MCP server (serve) instead of
// running the tests: the servers the tests start are it, in a mode.
const serverEnv = "MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(serverEnv); mode != "" {
		serve(mode)
		return
	}
	os.Exit(m.Run())
}

// serve is an MCP server on stdio, on the SDK's server side. Modes: hang
// (never answers initialize), exit (dies at start, saying why on stderr),
// tools (the tools below).
func serve(mode string) {
	switch mode {
	case "hang":
		_, _ = io.Copy(io.Discard, os.Stdin)
		time.Sleep(time.Hour)
	case "exit":
		fmt.Fprintln(os.Stderr, "boom: no config")
		os.Exit(2)
	}
	_ = testServer().Run(context.Background(), &sdk.StdioTransport{})
}

// testServer is the server of mode tools.
func testServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "faults", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	add := func(name string, ann *sdk.ToolAnnotations, h func(in) (string, error)) {
		sdk.AddTool(s, &sdk.Tool{Name: name, Description: name + " tool", Annotations: ann},
			func(_ context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
				text, err := h(a)
				if err != nil {
					return nil, nil, err
				}
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil, nil
			})
	}
	add("echo", nil, func(a in) (string, error) { return "echo: " + a.Text + " " + os.Getenv("MCP_TEST_VAR"), nil })
	add("big", nil, func(in) (string, error) { return strings.Repeat("x", 10<<20), nil })
	add("crash", nil, func(in) (string, error) { os.Exit(3); return "", nil })
	add("slow", nil, func(in) (string, error) { time.Sleep(time.Hour); return "", nil })
	// crashOnce dies on its first call (marked by a file), then answers.
	add("crashOnce", &sdk.ToolAnnotations{IdempotentHint: true}, func(a in) (string, error) {
		if _, err := os.Stat(a.Text); err != nil {
			_ = os.WriteFile(a.Text, nil, 0o600)
			os.Exit(3)
		}
		return "done after a crash", nil
	})
	add("fails", nil, func(in) (string, error) { return "", fmt.Errorf("no such issue") })
	add("bad.name", nil, func(in) (string, error) { return "", nil }) // MCP allows ".", the providers do not
	return s
}

// manager is a Manager of this binary as the server "t" in mode, with
// timeoutMs, run by tools.Local.
func manager(t *testing.T, mode string, timeoutMs int64) *Manager {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	m := New([]settings.MCPServer{{Name: "t", Command: exe, Env: map[string]string{serverEnv: mode, "MCP_TEST_VAR": "$MCP_TEST_FROM_WORKER"}, TimeoutMs: timeoutMs}}, nil)
	t.Cleanup(m.Close)
	return m
}

func call(m *Manager, ws, tool, text string) tools.Result {
	args, _ := json.Marshal(map[string]string{"text": text})
	return m.Call(context.Background(), ws, []string{"PATH=/usr/bin:/bin"}, "mcp__t__"+tool, args)
}

// Issue 41: every fault of a server ends the call with a one-line error
// result the model can act on, and the next call works where the server
// can: one that dies at start or never answers initialize, one that dies
// or hangs mid-call, a 10 MB answer (cut), a tool's own error.
func TestCall_FaultsAreOneLineResults(t *testing.T) {
	t.Setenv("MCP_TEST_FROM_WORKER", "from-the-worker")
	ws := t.TempDir()
	check := func(name string, r tools.Result, isErr bool, want ...string) {
		t.Helper()
		t.Logf("%s: %.300s", name, r.Content)
		for _, w := range want {
			if r.IsError != isErr || !strings.Contains(r.Content, w) || (isErr && strings.Contains(r.Content, "\n")) {
				t.Fatalf("%s: %+v, want error=%v with %q in one line", name, r, isErr, w)
			}
		}
	}
	m := manager(t, "tools", 30000)
	specs, names, problems := m.Specs(context.Background(), ws, nil, []string{"read", "mcp__t__e*", "mcp__t__big", "mcp__t__bad*"})
	if strings.Join(problems, ";") != `MCP tool "mcp__t__bad.name" left out: a model's tool name is at most 64 letters, digits, _ and -` || strings.Join(names, ",") != "mcp__t__big,mcp__t__echo" || len(specs) != 2 ||
		!strings.Contains(string(specs[1].Parameters), `"text"`) {
		t.Fatalf("specs %+v, names %v, problems %v", specs, names, problems)
	}
	check("echo", call(m, ws, "echo", "hi"), false, "echo: hi from-the-worker")
	big := call(m, ws, "big", "")
	check("10 MB", big, false, "[MCP result cut at 51200 of its 10485760 bytes]")
	if len(big.Content) > tools.MaxBytes+100 {
		t.Fatalf("10 MB result kept %d bytes", len(big.Content))
	}
	check("tool error", call(m, ws, "fails", ""), true, "no such issue")
	check("bad arguments", m.Call(context.Background(), ws, nil, "mcp__t__echo", json.RawMessage(`{"text":5}`)), true, `validating "arguments"`)
	check("unknown tool", call(m, ws, "nope", ""), true, `MCP server t has no tool "nope"`)
	check("crash mid-call", call(m, ws, "crash", ""), true, "MCP server t lost its connection during the call of crash", "may or may not have completed")
	check("after the crash", call(m, ws, "echo", "again"), false, "echo: again")
	check("idempotent tool retried after a crash", call(m, ws, "crashOnce", filepath.Join(ws, "crashed")), false, "done after a crash")
	hung := manager(t, "tools", 2000)
	began := time.Now()
	check("hang mid-call", call(hung, ws, "slow", ""), true, "MCP server t did not answer the call of slow within 2s (timeoutMs): the call may or may not have completed")
	if d := time.Since(began); d > 10*time.Second {
		t.Fatalf("the hung call took %s", d)
	}
	check("after the hang", call(hung, ws, "echo", "back"), false, "echo: back")

	check("exits at start", call(manager(t, "exit", 3000), ws, "echo", ""), true, "MCP server t did not start:", "its stderr: boom: no config")
	began = time.Now()
	check("never answers initialize", call(manager(t, "hang", 1000), ws, "echo", ""), true, "MCP server t did not start: no answer within 1s (timeoutMs)")
	if d := time.Since(began); d > 8*time.Second {
		t.Fatalf("the silent server took %s", d)
	}
	check("not a server", New(nil, nil).Call(context.Background(), ws, nil, "mcp__gh__x", nil), true, `MCP server "gh" is not one of this worker's mcp.servers`)
}

// A streamable HTTP server gets the headers of its settings, $VARIABLEs
// taken from the worker's environment; without them it does not start.
func TestCall_HTTPServerWithHeaders(t *testing.T) {
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return testServer() }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok-123" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	t.Setenv("MCP_TEST_TOKEN", "tok-123")
	args := json.RawMessage(`{"text":"over http"}`)
	for name, hdr := range map[string]string{"with the token": "Bearer $MCP_TEST_TOKEN", "without": "Bearer $MCP_TEST_NONE"} {
		m := New([]settings.MCPServer{{Name: "h", URL: srv.URL, Headers: map[string]string{"Authorization": hdr}, TimeoutMs: 5000}}, nil)
		r := m.Call(context.Background(), "", nil, "mcp__h__echo", args)
		m.Close()
		if ok := !r.IsError && strings.HasPrefix(r.Content, "echo: over http"); ok != (name == "with the token") || (r.IsError && !strings.Contains(r.Content, "MCP server h did not start:")) {
			t.Errorf("%s: %+v", name, r)
		}
	}
}
