package integration

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/settings"
)

// mcpModulesEnv names a node_modules directory holding the servers of
// testdata/mcp/package-lock.json (CI may `npm ci` there once); unset,
// the test installs them into the user cache, once per lock file.
const mcpModulesEnv = "MCP_TEST_NODE_MODULES"

// mcpModules returns a node_modules directory holding the MCP servers of
// testdata/mcp, skipping the test without node or npm.
func mcpModules(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: this test runs MCP servers from npm (install Node 20 or later)")
	}
	if dir := os.Getenv(mcpModulesEnv); dir != "" {
		return dir
	}
	return npmModules(t, "mcp", "@modelcontextprotocol", false)
}

// npmModules returns a node_modules directory holding the lock of
// testdata/NAME, installed once per lock into the user cache (beside, then
// moved into place: a concurrent run never sees half an install); marker
// is a path under node_modules a whole install has. scripts runs the
// packages' install scripts (node@22's fetches its binary). It skips the
// test without npm.
func npmModules(t *testing.T, name, marker string, scripts bool) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed: this test installs its node modules from npm")
	}
	src := filepath.Join("testdata", name)
	var lock []byte
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		lock = append(lock, b...)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256(lock)
	dir := filepath.Join(cache, "durable-agent", name+"-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", marker)); err == nil {
		return filepath.Join(dir, "node_modules")
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, _ := os.ReadFile(filepath.Join(src, f))
		if err := os.WriteFile(filepath.Join(tmp, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"ci", "--no-audit", "--no-fund"}
	if !scripts {
		args = append(args, "--ignore-scripts")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci of test/integration/%s (needs the npm registry once; or set %s for the MCP servers): %v\n%s", src, mcpModulesEnv, err, out)
	}
	if err := os.Rename(tmp, dir); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "node_modules")
}

// mcpWorkspace is a workspace holding a copy of the servers' modules: a
// stdio server runs in the sandbox, which binds the workspace only.
func mcpWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	if out, err := exec.Command("cp", "-a", mcpModules(t), filepath.Join(ws, "node_modules")).CombinedOutput(); err != nil {
		t.Fatalf("copy node_modules: %v %s", err, out)
	}
	return ws
}

// httpEverything starts server-everything over streamable HTTP on a free
// port of the host and returns its endpoint.
func httpEverything(t *testing.T, ws string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("node", "node_modules/@modelcontextprotocol/server-everything/dist/index.js", "streamableHttp")
	cmd.Dir, cmd.Env = ws, append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("server-everything did not listen over HTTP within 30s")
		}
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

// Issue 41: a scripted job calls tools of three real MCP servers from npm
// (server-everything, server-filesystem, and server-memory defined by the
// workspace's .mcp.json and allowed in the worker's mcp.allowed), run by
// a real worker in the bubblewrap sandbox (one slower to start than a
// heartbeat timeout), and of server-everything over streamable HTTP,
// reached at the host the session's egress allows (tools.sandbox.allowHosts)
// and refused in one line under a name it does not: the
// model is offered their tools with their schemas, the results (text,
// structured content, an image as an image block) reach the next model
// call and the session file, the file server's write lands in the workspace, the
// server's environment holds none of the worker's secrets, a result is
// redacted of them, a server that does not start is a one-line error
// result after which the session goes on, and a .mcp.json server the
// user did not allow never starts: the model reads how to allow it.
func TestIntegration_MCPToolsOfRealServers(t *testing.T) {
	const secret = "sk-mcp-worker-secret-Zq81Lm4Pt6"
	t.Setenv("DA_MCP_IT_API_KEY", secret)
	e := sandboxEnv(t)
	ws := mcpWorkspace(t)
	web := httpEverything(t, ws)
	// everything starts slower than the model call's heartbeat timeout
	// (2 s here): the listing runs under the call's heartbeats.
	e.s.MCP.Servers = `{"everything": {"command": "sh", "args": ["-c", "sleep 3; exec node node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio"]},
		"fs": {"command": "node", "args": ["node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", "."]},
		"web": {"url": "` + web + `"},
		"webno": {"url": "` + strings.Replace(web, "127.0.0.1", "localhost", 1) + `"},
		"bad": {"command": "no-such-mcp-server"}}`
	project := `{"mcpServers": {"memory": {"command": "node", "args": ["node_modules/@modelcontextprotocol/server-memory/dist/index.js"]},
		"unallowed": {"command": "touch", "args": ["ran-unallowed"]}}}`
	if err := os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(project), 0o644); err != nil {
		t.Fatal(err)
	}
	defs, err := settings.ReadProjectMCP(ws)
	if err != nil || len(defs) != 2 {
		t.Fatal(defs, err)
	}
	e.s.MCP.Allowed = []string{defs[0].Fingerprint(ws)}
	// The session's egress (network off here) reaches the HTTP server at
	// the address listed, not under the name that is not.
	e.s.Tools.Sandbox.AllowHosts = []string{strings.TrimSuffix(strings.TrimPrefix(web, "http://"), "/mcp")}
	e.s.Tools.Enabled = append(e.s.Tools.Enabled, "mcp__everything__*", "mcp__fs__*", "mcp__web__get-sum", "mcp__web__echo", "mcp__webno__*", "mcp__bad__*", "mcp__memory__*", "mcp__unallowed__*")
	e.s.Tools.Policy = []string{"allow mcp__*"}
	rec := &seen{}
	e.ext = app.Extensions{Activities: func(a *activities.Activities) {
		a.WrapProvider(func(p llm.Provider) llm.Provider { rec.next = p; return rec })
	}}
	e.startWorker()

	in := client.PromptInput(e.s, "mcp-real", "use the MCP tools")
	in.Workspace = ws
	in.Model.Faults = []string{
		`tool:mcp__everything__echo {"message":"hello from the job"}`,
		`tool:mcp__everything__get-structured-content {"location":"Chicago"}`,
		`tool:mcp__everything__get-tiny-image {}`,
		`tool:mcp__everything__get-env {}`,
		`tool:mcp__fs__write_file {"path":"notes.txt","content":"written by the fs server"}`,
		`tool:mcp__fs__read_text_file {"path":"notes.txt"}`,
		`tool:mcp__web__get-sum {"a":2,"b":3}`,
		`tool:mcp__web__echo {"message":"the key is ` + secret + `"}`,
		`tool:mcp__webno__get-sum {"a":2,"b":3}`,
		`tool:mcp__bad__anything {}`,
		`tool:mcp__memory__create_entities {"entities":[{"name":"durable","entityType":"project","observations":["runs on Temporal"]}]}`,
		`tool:mcp__memory__search_nodes {"query":"Temporal"}`,
		`tool:mcp__unallowed__anything {}`,
		`text:done`,
	}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v, %v", res, err)
	}

	rec.mu.Lock()
	reqs := slices.Clone(rec.reqs)
	rec.mu.Unlock()
	var offered []string
	for _, spec := range reqs[0].Tools {
		offered = append(offered, spec.Name)
		if spec.Name == "mcp__fs__write_file" && !bytes.Contains(spec.Parameters, []byte(`"content"`)) {
			t.Errorf("write_file's schema is not the server's: %s", spec.Parameters)
		}
	}
	for _, want := range []string{"read", "mcp__everything__echo", "mcp__everything__get-env", "mcp__fs__write_file", "mcp__fs__read_text_file", "mcp__web__get-sum", "mcp__memory__search_nodes"} {
		if !slices.Contains(offered, want) {
			t.Errorf("the model was not offered %s: %v", want, offered)
		}
	}
	results := map[string]agent.Message{}
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == agent.RoleToolResult {
			results[m.ToolName] = m
		}
	}
	for tool, want := range map[string]string{
		"mcp__everything__echo":                   "Echo: hello from the job",
		"mcp__everything__get-structured-content": `"temperature":`,
		"mcp__everything__get-tiny-image":         "[image image/png,",
		"mcp__everything__get-env":                "PATH",
		"mcp__fs__write_file":                     "notes.txt",
		"mcp__fs__read_text_file":                 "written by the fs server",
		"mcp__web__get-sum":                       "The sum of 2 and 3 is 5.",
		"mcp__web__echo":                          "Echo: the key is ",
		"mcp__webno__get-sum":                     "MCP server webno did not start: ",
		"mcp__bad__anything":                      "MCP server bad did not start:",
		"mcp__memory__search_nodes":               "runs on Temporal",
		"mcp__unallowed__anything":                "MCP server unallowed of " + ws + "/.mcp.json is not allowed: run `starter mcp allow unallowed` in " + ws,
	} {
		m, ok := results[tool]
		if !ok || !strings.Contains(m.Text(), want) || m.IsError != (tool == "mcp__bad__anything" || tool == "mcp__unallowed__anything" || tool == "mcp__webno__get-sum") {
			t.Errorf("%s: the model read %+v, want %q", tool, m, want)
		}
	}
	// The image reaches the model as an image block of the result, and
	// the session file keeps it.
	img := results["mcp__everything__get-tiny-image"].Images()
	if len(img) != 1 || img[0].MimeType != "image/png" || len(img[0].Data) < 100 {
		t.Errorf("the model's tool result carries images %+v, want server-everything's tiny PNG", img)
	} else if file := readTree(t, filepath.Join(e.dataDir, "sessions")); !bytes.Contains(file, []byte(img[0].Data)) {
		t.Error("the session file lacks the image")
	}
	if bad := results["mcp__bad__anything"].Text(); strings.Contains(bad, "\n") {
		t.Errorf("the failed start is not one line: %q", bad)
	}
	if no := results["mcp__webno__get-sum"].Text(); strings.Contains(no, "\n") || !strings.Contains(no, "host localhost:") || !strings.Contains(no, "is not in tools.sandbox.allowHosts") {
		t.Errorf("the HTTP server the egress rules refuse: %q, want one line naming the host and tools.sandbox.allowHosts", no)
	}
	if env := results["mcp__everything__get-env"].Text(); strings.Contains(env, secret) || strings.Contains(env, "DA_MCP_IT_API_KEY") {
		t.Errorf("the server's environment holds the worker's secret: %.500s", env)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran-unallowed")); err == nil {
		t.Error("the server the user did not allow ran")
	}
	if b, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(b) != "written by the fs server" {
		t.Errorf("the fs server's write: %q, %v", b, err)
	}
	file := readTree(t, filepath.Join(e.dataDir, "sessions"))
	for _, want := range []string{"Echo: hello from the job", "written by the fs server", "MCP server bad did not start"} {
		if !bytes.Contains(file, []byte(want)) {
			t.Errorf("the session file lacks %q", want)
		}
	}
	if echo := results["mcp__web__echo"].Text(); strings.Contains(echo, secret) {
		t.Errorf("an MCP result is not redacted of the worker's secrets: %q", echo)
	}
	// The model call's result in history says which MCP tools it offered.
	if h := history(t, e, run.GetID(), run.GetRunID()); !bytes.Contains(h.results[activities.CallModelName], []byte(`"mcpTools":["mcp__everything__echo"`)) {
		t.Errorf("no model call's result in history records the MCP tools offered: %.300s", h.results[activities.CallModelName])
	}
}

// Issue 41: a worker SIGKILLed during a call of an MCP tool: the model
// reads bash's "may or may not have completed" result (the call has one
// attempt and is never made again), and the prompt goes on on another
// worker.
func TestIntegration_MCPCallOfAKilledWorkerIsNotMadeAgain(t *testing.T) {
	e := sandboxEnv(t)
	ws := mcpWorkspace(t)
	e.s.MCP.Servers = `{"everything": {"command": "node", "args": ["node_modules/@modelcontextprotocol/server-everything/dist/index.js", "stdio"]}}`
	e.s.Tools.Enabled = append(e.s.Tools.Enabled, "mcp__everything__*")
	e.s.Tools.Policy = []string{"allow mcp__everything__*"}
	t.Setenv(envWorkerMCP, e.s.MCP.Servers)
	w := e.spawnWorker()
	in := client.PromptInput(e.s, "mcp-kill", "run the long operation")
	in.Workspace = ws
	in.Model.Faults = []string{`tool:mcp__everything__trigger-long-running-operation {"duration":60,"steps":60}`, `text:done`}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	e.waitEvent("mcp-kill", time.Minute, isType(agent.EventToolExecutionStart))
	time.Sleep(2 * time.Second) // the call runs on the server
	_ = w.Process.Kill()
	_, _ = w.Process.Wait()
	e.startWorker()
	res, err := e.result(run)
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	var results []string
	for _, ev := range e.events("mcp-kill") {
		if ev.Type == agent.EventToolExecutionEnd && ev.ToolResult != nil {
			results = append(results, ev.ToolResult.Content[0].Text)
		}
	}
	if len(results) != 1 || !strings.Contains(results[0], "may or may not have completed") {
		t.Fatalf("tool results %q, want one that may or may not have completed", results)
	}
}

// Issue 41: a stdio server's sandbox has the server's own network
// (mcp.servers.NAME.network), off unless it says otherwise, whatever
// bash's: with bash on the host's network, a server without a network
// setting cannot reach a listener on the host's loopback, one with
// network host can.
func TestIntegration_MCPServerNetworkIsItsOwn(t *testing.T) {
	e := sandboxEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for c, err := ln.Accept(); err == nil; c, err = ln.Accept() {
			c.Close()
		}
	}()
	// Not an MCP server: it says on stderr whether it reached the
	// listener and exits, and the failed start quotes that line.
	probe := fmt.Sprintf(`["-c", "(: <>/dev/tcp/127.0.0.1/%d) 2>/dev/null && echo reached >&2 || echo unreachable >&2; exit 1"]`, ln.Addr().(*net.TCPAddr).Port)
	e.s.Tools.Sandbox.Network = settings.SandboxNetworkHost
	e.s.MCP.Servers = `{"dflt": {"command": "bash", "args": ` + probe + `}, "hostnet": {"command": "bash", "args": ` + probe + `, "network": "host"}}`
	e.s.Tools.Enabled = append(e.s.Tools.Enabled, "mcp__dflt__*", "mcp__hostnet__*")
	e.s.Tools.Policy = []string{"allow mcp__*"}
	e.startWorker()
	in := client.PromptInput(e.s, "mcp-net", "reach the host")
	in.Workspace = t.TempDir()
	in.Model.Faults = []string{`tool:mcp__dflt__probe {}`, `tool:mcp__hostnet__probe {}`, `text:done`}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	got := map[string]string{}
	for _, ev := range e.events("mcp-net") {
		if ev.Type == agent.EventToolExecutionEnd && ev.ToolResult != nil {
			got[ev.ToolName] = ev.ToolResult.Content[0].Text
		}
	}
	if !strings.HasSuffix(got["mcp__dflt__probe"], "its stderr: unreachable") || !strings.HasSuffix(got["mcp__hostnet__probe"], "its stderr: reached") {
		t.Fatalf("results %q: want the default server unreachable, the host one reached", got)
	}
}
