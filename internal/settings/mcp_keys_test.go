package settings

import (
	"strings"
	"testing"
)

// Issue 41: mcp.servers is a mapping in the settings file and JSON in
// the environment, read strictly: each bad server is refused in one line
// naming the key, the server and the problem, never echoing the value
// (headers hold credentials); tools.enabled names MCP tools and globs.
func TestMCPServersKey(t *testing.T) {
	file := writeYAML(t, `mcp:
  servers:
    fs:
      command: node
      args: [server.js, "."]
      env: {LOG: debug}
    gh:
      url: https://mcp.example.com/mcp
      headers: {Authorization: "Bearer $GH_TOKEN"}
      timeoutMs: 30000
tools:
  enabled: [read, mcp__fs__*, mcp__gh__get_issue]
`)
	s, err := load(t, file, newEnv(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	servers, err := ParseMCPServers(s.MCP.Servers)
	if err != nil || len(servers) != 2 {
		t.Fatalf("servers %+v, %v", servers, err)
	}
	if fs, gh := servers[0], servers[1]; fs.Name != "fs" || fs.Command != "node" || strings.Join(fs.Args, " ") != "server.js ." ||
		fs.Env["LOG"] != "debug" || fs.TimeoutMs != DefaultMCPTimeoutMs || gh.URL == "" || gh.Headers["Authorization"] != "Bearer $GH_TOKEN" || gh.TimeoutMs != 30000 {
		t.Fatalf("servers: %+v", servers)
	}
	if got := strings.Join(s.Tools.Enabled, ";"); got != "read;mcp__fs__*;mcp__gh__get_issue" {
		t.Fatalf("tools.enabled %q", got)
	}
	for name, tc := range map[string]struct{ env, want string }{
		"not JSON":         {`{fs:`, "settings: mcp.servers: must be a mapping of server names"},
		"unknown field":    {`{"fs":{"comand":"node"}}`, `settings: mcp.servers: server "fs": unknown field "comand"`},
		"neither":          {`{"fs":{}}`, `server "fs": needs a command (stdio) or a url (streamable HTTP), not both`},
		"both":             {`{"fs":{"command":"x","url":"https://a/"}}`, `server "fs": needs a command`},
		"bad name":         {`{"f_s":{"command":"x"}}`, `server "f_s": the name must be 1 to 32 letters, digits and -`},
		"bad url":          {`{"gh":{"url":"ftp://a/"}}`, `server "gh": url "ftp://a/" must be an http(s) URL`},
		"cwd outside":      {`{"fs":{"command":"x","cwd":"../up"}}`, `server "fs": cwd "../up" must be a directory inside the workspace`},
		"headers secret":   {`{"gh":{"command":"x","headers":{"A":"sk-secret-1"}}}`, `server "gh": headers are for an HTTP server`},
		"network of a url": {`{"gh":{"url":"https://a/","network":"host"}}`, `server "gh": network "host" is a stdio server's: off, host or allowlist`},
		"timeout too big":  {`{"fs":{"command":"x","timeoutMs":999999}}`, `timeoutMs must be from 0 (the default, 60000) to 240000`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := loadEnv(t, map[string]string{"HOME": t.TempDir(), "DURABLE_AGENT_MCP_SERVERS": tc.env})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "sk-secret") ||
				!strings.Contains(err.Error(), "(from environment DURABLE_AGENT_MCP_SERVERS)") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line with %q", err, tc.want)
			}
		})
	}
	_, err = loadEnv(t, map[string]string{"HOME": t.TempDir(), "DURABLE_AGENT_TOOLS_ENABLED": "read;mcp__f_s__x"})
	if err == nil || !strings.Contains(err.Error(), "tools.enabled[1]: is not an MCP tool name") {
		t.Fatalf("bad MCP tool name: %v", err)
	}
}
