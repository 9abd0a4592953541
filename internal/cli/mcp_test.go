package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpServerEnv makes this test binary an MCP server with one tool
// (TestMain): the server `starter mcp list` starts in its test.
const mcpServerEnv = "CLI_TEST_MCP_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(mcpServerEnv) != "" {
		s := sdk.NewServer(&sdk.Implementation{Name: "t", Version: "1"}, nil)
		type in struct {
			Host  string `json:"host"`
			Count int    `json:"count,omitempty"`
		}
		sdk.AddTool(s, &sdk.Tool{Name: "ping", Description: "Pings a host.\nMore."}, func(context.Context, *sdk.CallToolRequest, in) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{}, nil, nil
		})
		_ = s.Run(context.Background(), &sdk.StdioTransport{})
		return
	}
	os.Exit(m.Run())
}

// Issue 41: `starter mcp list` names the settings layer of mcp.servers
// and, per server, whether it starts here and its tools, or in one line
// why it does not.
func TestMCPList_ServersStateAndTools(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	servers := fmt.Sprintf(`{"good": {"command": %q, "env": {%q: "1"}}, "bad": {"command": "no-such-mcp-server"}}`, exe, mcpServerEnv)
	code, out, errOut := run(t, map[string]string{"DURABLE_AGENT_MCP_SERVERS": servers, "DURABLE_AGENT_TOOLS_SANDBOX_MODE": "off"}, "mcp", "list")
	for _, want := range []string{"good  " + exe + "  (mcp.servers from environment DURABLE_AGENT_MCP_SERVERS)\n    started: 1 tools: mcp__good__ping\n",
		"bad  no-such-mcp-server  (mcp.servers from environment DURABLE_AGENT_MCP_SERVERS)\n    MCP server bad did not start:"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("exit %d, stdout:\n%s\nstderr: %s\nwant %q", code, out, errOut, want)
		}
	}
	if code, out, _ := run(t, nil, "mcp", "list"); code != 0 || !strings.HasPrefix(out, "no MCP servers: mcp.servers is empty and ") {
		t.Fatalf("without servers: exit %d, %q", code, out)
	}
}

// Issue 41: a server of the workspace's .mcp.json is listed with its
// file and how to allow it, and does not start until `starter mcp allow`
// recorded it in the user's settings; then `starter mcp tools` lists its
// tools.
func TestMCPAllow_ProjectServerStartsOnceAllowed(t *testing.T) {
	exe, _ := os.Executable()
	ws, home := t.TempDir(), t.TempDir()
	t.Chdir(ws)
	def := fmt.Sprintf(`{"mcpServers": {"proj": {"command": %q, "env": {%q: "1"}}}}`, exe, mcpServerEnv)
	if err := os.WriteFile(".mcp.json", []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"DURABLE_AGENT_HOME": home, "DURABLE_AGENT_TOOLS_SANDBOX_MODE": "off"}
	refused := "MCP server proj of " + ws + "/.mcp.json is not allowed: run `starter mcp allow proj` in " + ws
	if code, out, _ := run(t, vars, "mcp", "list"); code != 0 || !strings.Contains(out, "proj  "+exe+"  ("+ws+"/.mcp.json)\n    "+refused+"\n") {
		t.Fatalf("list before allow: exit %d\n%s", code, out)
	}
	if code, _, errOut := run(t, vars, "mcp", "tools", "proj"); code != ExitUsage || !strings.Contains(errOut, refused) {
		t.Fatalf("tools before allow: exit %d, %s", code, errOut)
	}
	if code, out, errOut := run(t, vars, "mcp", "allow", "proj"); code != 0 || !strings.HasPrefix(out, "allowed proj of "+ws+"/.mcp.json") {
		t.Fatalf("allow: exit %d, %s %s", code, out, errOut)
	}
	if b, _ := os.ReadFile(home + "/settings.yaml"); !strings.Contains(string(b), "allowed:\n    - proj@") {
		t.Fatalf("settings file after allow:\n%s", b)
	}
	if code, out, _ := run(t, vars, "mcp", "list"); code != 0 || !strings.Contains(out, "started: 1 tools: mcp__proj__ping") {
		t.Fatalf("list after allow: exit %d\n%s", code, out)
	}
	if code, out, errOut := run(t, vars, "mcp", "tools", "proj"); code != 0 || out != "mcp__proj__ping(count integer, host* string)  Pings a host.\n" {
		t.Fatalf("tools: exit %d, %q %s", code, out, errOut)
	}
	if code, _, errOut := run(t, vars, "mcp", "allow", "nope"); code != ExitUsage || !strings.Contains(errOut, `no MCP server "nope" in mcp.servers nor in `+ws+"/.mcp.json") {
		t.Fatalf("allow of an unknown server: exit %d, %s", code, errOut)
	}
}
