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
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/durableagent/durableagent/internal/egress"
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
	add("garbage", nil, func(in) (string, error) { fmt.Println("{not json"); time.Sleep(time.Hour); return "", nil })
	// grow adds a tool: the server tells its clients their list changed.
	add("grow", nil, func(in) (string, error) {
		sdk.AddTool(s, &sdk.Tool{Name: "grown"}, func(context.Context, *sdk.CallToolRequest, in) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{}, nil, nil
		})
		return "grown", nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "progress"}, func(ctx context.Context, req *sdk.CallToolRequest, _ in) (*sdk.CallToolResult, any, error) {
		for i := range 2 {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i + 1), Total: 2, Message: "step"})
		}
		// The client handles notifications apart from results: a late one
		// may come after the result, when the call's live output ended.
		time.Sleep(300 * time.Millisecond)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil, nil
	})
	// waitAbort waits for the client's cancellation, then marks it in a file.
	sdk.AddTool(s, &sdk.Tool{Name: "waitAbort"}, func(ctx context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
		<-ctx.Done()
		_ = os.WriteFile(a.Text, []byte("cancelled"), 0o600)
		return nil, nil, ctx.Err()
	})
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
	m := New([]settings.MCPServer{{Name: "t", Command: exe, Env: map[string]string{serverEnv: mode, "MCP_TEST_VAR": "$MCP_TEST_FROM_WORKER"}, TimeoutMs: timeoutMs}}, tools.Local)
	t.Cleanup(m.Close)
	return m
}

func call(m *Manager, ws, tool, text string) tools.Result {
	args, _ := json.Marshal(map[string]string{"text": text})
	return m.Call(context.Background(), ws, []string{"PATH=/usr/bin:/bin"}, "mcp__t__"+tool, args, nil)
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
	check("bad arguments", m.Call(context.Background(), ws, nil, "mcp__t__echo", json.RawMessage(`{"text":5}`), nil), true, `validating "arguments"`)
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
	check("not a server", New(nil, tools.Local).Call(context.Background(), ws, nil, "mcp__gh__x", nil, nil), true, `MCP server "gh" is not one of this worker's mcp.servers nor of the workspace's .mcp.json`)
	check("malformed JSON on stdout", call(manager(t, "tools", 3000), ws, "garbage", ""), true, "MCP server t", "may or may not have completed")
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
		m := New([]settings.MCPServer{{Name: "h", URL: srv.URL, Headers: map[string]string{"Authorization": hdr}, TimeoutMs: 5000}}, tools.Local)
		r := m.Call(context.Background(), "", nil, "mcp__h__echo", args, nil)
		m.Close()
		if ok := !r.IsError && strings.HasPrefix(r.Content, "echo: over http"); ok != (name == "with the token") || (r.IsError && !strings.Contains(r.Content, "MCP server h did not start:")) {
			t.Errorf("%s: %+v", name, r)
		}
	}
}

// Issue 41: a server of the workspace's .mcp.json (Claude Code's format)
// starts only once the user allowed its definition in that workspace; a
// changed definition needs allowing again; its values are taken as
// written, never expanded from the worker's variables; a link, a large or a malformed file is one
// line naming the file.
func TestProjectServers_StartOnlyOnceAllowed(t *testing.T) {
	t.Setenv("MCP_TEST_FROM_WORKER", "worker-secret")
	exe, _ := os.Executable()
	ws := t.TempDir()
	project := func(def string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(`{"mcpServers": {"p": `+def+`}}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	def := fmt.Sprintf(`{"type": "stdio", "command": %q, "env": {%q: "tools", "MCP_TEST_VAR": "$MCP_TEST_FROM_WORKER"}}`, exe, serverEnv)
	project(def)
	var allowed []string
	m := New(nil, tools.Local)
	m.Allowed = func() []string { return allowed }
	t.Cleanup(m.Close)
	echo := func() tools.Result {
		return m.Call(context.Background(), ws, []string{"PATH=/usr/bin:/bin"}, "mcp__p__echo", json.RawMessage(`{"text":"hi"}`), nil)
	}
	refused := "MCP server p of " + ws + "/.mcp.json is not allowed: run `starter mcp allow p` in " + ws
	if r := echo(); !r.IsError || r.Content != refused {
		t.Fatalf("unallowed call: %+v", r)
	}
	if specs, _, problems := m.Specs(context.Background(), ws, nil, []string{"mcp__p__*"}); len(specs) != 0 || strings.Join(problems, ";") != refused {
		t.Fatalf("unallowed listing: %v, %v", specs, problems)
	}
	servers, err := m.Servers(ws)
	if err != nil || len(servers) != 1 {
		t.Fatal(servers, err)
	}
	allowed = []string{servers[0].Fingerprint(ws)}
	if r := echo(); r.IsError || r.Content != "echo: hi $MCP_TEST_FROM_WORKER" {
		t.Fatalf("allowed call (its value as written, not the worker's variable): %+v", r)
	}
	project(strings.Replace(def, `"env"`, `"args": ["x"], "env"`, 1))
	if r := echo(); r.Content != refused {
		t.Fatalf("a changed definition ran without allowing: %+v", r)
	}
	for name, tc := range map[string]struct{ content, want string }{
		"malformed": {`{"mcpServers": [`, "/.mcp.json: not JSON of the form"},
		"sse":       {`{"mcpServers": {"s": {"type": "sse", "url": "http://a/"}}}`, `/.mcp.json: server "s": type "sse" is not stdio or http`},
		"bad field": {`{"mcpServers": {"s": {"command": "x", "bogus": 1}}}`, `/.mcp.json: server "s": unknown field "bogus"`},
		"large":     {`{"mcpServers": {}, "x": "` + strings.Repeat("a", 70<<10) + `"}`, "/.mcp.json: larger than 64 KB"},
		"link":      {"", "/.mcp.json: a symbolic link, not followed"},
	} {
		os.Remove(filepath.Join(ws, ".mcp.json"))
		if name == "link" {
			_ = os.WriteFile(filepath.Join(ws, "real.json"), []byte(`{"mcpServers": {}}`), 0o600)
			_ = os.Symlink("real.json", filepath.Join(ws, ".mcp.json"))
		} else {
			_ = os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(tc.content), 0o600)
		}
		if r := echo(); !r.IsError || !strings.Contains(r.Content, ws+tc.want) || strings.Contains(r.Content, "\n") {
			t.Errorf("%s: %+v, want one line with %q", name, r, tc.want)
		}
	}
}

// Issue 41: a tool list that changes mid-session (listChanged) is the
// next listing's; progress notifications reach the call's live output;
// an abort sends MCP's cancellation to the server.
func TestCall_ListChangedProgressAndCancellation(t *testing.T) {
	ws := t.TempDir()
	m := manager(t, "tools", 10000)
	if _, names, _ := m.Specs(context.Background(), ws, nil, []string{"mcp__t__gr*"}); strings.Join(names, ",") != "mcp__t__grow" {
		t.Fatalf("before: %v", names)
	}
	call(m, ws, "grow", "")
	var names []string
	for deadline := time.Now().Add(5 * time.Second); !slices.Contains(names, "mcp__t__grown") && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		_, names, _ = m.Specs(context.Background(), ws, nil, []string{"mcp__t__gr*"})
	}
	if strings.Join(names, ",") != "mcp__t__grow,mcp__t__grown" {
		t.Fatalf("after the server's list changed: %v", names)
	}

	var live []string
	r := m.Call(context.Background(), ws, nil, "mcp__t__progress", json.RawMessage(`{"text":""}`), func(s string) { live = append(live, s) })
	if r.Content != "done" || len(live) != 2 || live[1] != "progress 1/2 step\nprogress 2/2 step" {
		t.Fatalf("progress: %+v, live output %q", r, live)
	}

	mark := filepath.Join(ws, "cancelled")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if r := m.Call(ctx, ws, nil, "mcp__t__waitAbort", json.RawMessage(`{"text":"`+mark+`"}`), nil); r.Content != "Tool call aborted" {
		t.Fatalf("aborted call: %+v", r)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(mark); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatal("the server's call was not cancelled")
		}
	}
}

// Issue 41: a connection unused for mcp.idleMs is closed (its server
// ended), and the next call starts it again.
func TestCall_IdleConnectionIsClosed(t *testing.T) {
	ws := t.TempDir()
	m := manager(t, "tools", 10000)
	m.Idle = 200 * time.Millisecond
	if r := call(m, ws, "echo", "one"); r.IsError {
		t.Fatal(r)
	}
	open := func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		for _, c := range m.conns {
			c.mu.Lock()
			defer c.mu.Unlock()
			if c.sess != nil {
				return true
			}
		}
		return false
	}
	if !open() {
		t.Fatal("no open connection after a call")
	}
	time.Sleep(time.Second)
	if open() {
		t.Fatal("the idle connection is still open")
	}
	if r := call(m, ws, "echo", "two"); r.IsError || !strings.HasPrefix(r.Content, "echo: two") {
		t.Fatal(r)
	}
}

// Issue 41: a result's PNG, JPEG, GIF and WebP images reach the model as
// image blocks, up to MaxImageBytes of base64 together; an image beyond
// that, or of another type, is a line of the text that says why.
func TestResult_ImagesAreBlocksWithinTheBound(t *testing.T) {
	big := make([]byte, MaxImageBytes*3/4-3) // 4 bytes of base64 under the bound
	r := result(&sdk.CallToolResult{Content: []sdk.Content{
		&sdk.TextContent{Text: "two images"},
		&sdk.ImageContent{MIMEType: "image/png", Data: big},
		&sdk.ImageContent{MIMEType: "image/gif", Data: []byte("GIF89a")},
		&sdk.ImageContent{MIMEType: "image/svg+xml", Data: []byte("<svg/>")},
	}})
	if len(r.Images) != 1 || r.Images[0].MimeType != "image/png" || r.Images[0].Type != "image" {
		t.Fatalf("images %d, want the PNG alone", len(r.Images))
	}
	want := fmt.Sprintf("two images\n[image image/png, %d bytes, below]\n[image image/gif, 6 bytes, not shown: only PNG, JPEG, GIF and WebP, %d bytes of base64 a result]\n[image image/svg+xml, 6 bytes, not shown: only PNG, JPEG, GIF and WebP, %[2]d bytes of base64 a result]", len(big), MaxImageBytes)
	if r.Content != want {
		t.Errorf("text %q\nwant %q", r.Content, want)
	}
}

// Issue 41: an HTTP server is reached through Dial, the session's egress
// rule: at an address the allow-list names; refused in one line naming
// the host and tools.sandbox.allowHosts when it does not, or names the
// host alone (a name of an internal address).
func TestCall_HTTPServerThroughTheEgressRule(t *testing.T) {
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return testServer() }, nil))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	_, port, _ := strings.Cut(addr, ":")
	for _, c := range []struct {
		name, url, allow, want string
	}{
		{"listed address", srv.URL, addr, "echo: through the rule"},
		{"unlisted address", srv.URL, "example.com", "egress proxy: host " + addr + " is not in tools.sandbox.allowHosts"},
		{"name of an internal address", "http://localhost:" + port, "localhost", "egress proxy: host localhost resolves only to internal addresses"},
	} {
		allow, err := egress.ParseAllowList([]string{c.allow})
		if err != nil {
			t.Fatal(err)
		}
		m := New([]settings.MCPServer{{Name: "h", URL: c.url, TimeoutMs: 5000}}, tools.Local)
		m.Dial = egress.DialContext(allow)
		r := m.Call(context.Background(), "", nil, "mcp__h__echo", json.RawMessage(`{"text":"through the rule"}`), nil)
		m.Close()
		if !strings.Contains(r.Content, c.want) || strings.Contains(r.Content, "\n") || r.IsError == (c.name == "listed address") ||
			r.IsError && !strings.HasPrefix(r.Content, "MCP server h did not start: ") {
			t.Errorf("%s: %+v, want %q", c.name, r, c.want)
		}
	}
}

// Issue 41: an HTTP server that goes away mid-call: the SDK's attempts to
// resume the call's stream fail, and the call ends with the one-line
// "may or may not have completed" result well before its timeout.
func TestCall_HTTPServerGoneMidCall(t *testing.T) {
	srv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return testServer() }, nil))
	m := New([]settings.MCPServer{{Name: "h", URL: srv.URL, TimeoutMs: 60000}}, tools.Local)
	defer m.Close()
	time.AfterFunc(500*time.Millisecond, func() { srv.CloseClientConnections(); srv.Close() })
	start := time.Now()
	r := m.Call(context.Background(), "", nil, "mcp__h__slow", json.RawMessage(`{"text":""}`), nil)
	if !r.IsError || !strings.Contains(r.Content, "may or may not have completed") || strings.Contains(r.Content, "\n") || time.Since(start) > 30*time.Second {
		t.Errorf("after %s: %+v", time.Since(start), r)
	}
	t.Logf("after %s: %s", time.Since(start), r.Content)
}
