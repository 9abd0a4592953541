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
		sdk.AddTool(s, &sdk.Tool{Name: "ping"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
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
	for _, want := range []string{"mcp.servers from environment DURABLE_AGENT_MCP_SERVERS", "good  " + exe + "\n    started: 1 tools: mcp__good__ping\n",
		"bad  no-such-mcp-server\n    MCP server bad did not start:"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("exit %d, stdout:\n%s\nstderr: %s\nwant %q", code, out, errOut, want)
		}
	}
	if code, out, _ := run(t, nil, "mcp", "list"); code != 0 || out != "no MCP servers: mcp.servers is empty\n" {
		t.Fatalf("without servers: exit %d, %q", code, out)
	}
}
