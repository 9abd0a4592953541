package settings

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"go.yaml.in/yaml/v3"

	"github.com/durableagent/durableagent/internal/line"
)

// MCP is the `mcp` group: the MCP servers whose tools the worker offers
// (package internal/mcp). Servers is JSON text (ParseMCPServers): the
// file's mapping, or the environment's and flags' text.
type MCP struct {
	Servers string `json:"servers"`
	// Allowed are the servers of projects' .mcp.json files the user
	// allowed (starter mcp allow): NAME@FINGERPRINT (MCPServer.Fingerprint).
	Allowed []string `json:"allowed"`
	// IdleMs closes a server's connection unused this long (0: the default).
	IdleMs int64 `json:"idleMs"`
}

// MCPServer is one server of mcp.servers: a stdio server (Command, run in
// the session's workspace, in the sandbox) or a streamable HTTP one (URL).
type MCPServer struct {
	Name    string            `json:"-"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// Cwd is the server's directory, relative to the workspace ("": the
	// workspace).
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// TimeoutMs bounds its start and each call (0: DefaultMCPTimeoutMs).
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// Network is a stdio server's sandbox network: off ("" too), host or
	// allowlist (tools.sandbox.allowHosts), as tools.sandbox.network.
	Network string `json:"network,omitempty"`
	// Type is "", stdio or http (Claude Code's .mcp.json names it).
	Type string `json:"type,omitempty"`
	// Project is the .mcp.json that defined the server ("": mcp.servers).
	Project string `json:"-"`
}

// DefaultMCPTimeoutMs and MaxMCPTimeoutMs bound an MCP server's start
// and each call; the maximum stays below the tool call's activity
// timeout (tools.DefaultTimeout, 5 minutes).
const DefaultMCPTimeoutMs, MaxMCPTimeoutMs = 60_000, 240_000

// ParseMCPServers reads mcp.servers, strictly, in name order; the error
// names the server and the problem in one line.
func ParseMCPServers(text string) ([]MCPServer, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &raw); err != nil {
		return nil, fmt.Errorf("must be a mapping of server names to {command, args, env, cwd} or {url, headers}: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	var out []MCPServer
	for name, b := range raw {
		s := MCPServer{Name: name}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		err := dec.Decode(&s)
		switch {
		case !validMCPName(name):
			err = fmt.Errorf("the name must be 1 to 32 letters, digits and -")
		case err != nil:
			err = fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "json: "))
		case s.Network != "" && (s.URL != "" || !slices.Contains(SandboxNetworks, s.Network)):
			err = fmt.Errorf("network %q is a stdio server's: off, host or allowlist", s.Network)
		case s.Type != "" && s.Type != "stdio" && s.Type != "http":
			err = fmt.Errorf("type %q is not stdio or http", s.Type)
		case (s.Command == "") == (s.URL == ""):
			err = fmt.Errorf("needs a command (stdio) or a url (streamable HTTP), not both")
		case s.URL != "" && checkURL(s.URL) != "":
			err = fmt.Errorf("url %q must be an http(s) URL", s.URL)
		case s.URL != "" && (len(s.Args) > 0 || len(s.Env) > 0 || s.Cwd != ""):
			err = fmt.Errorf("args, env and cwd are for a stdio server (command), not a url")
		case s.Command != "" && len(s.Headers) > 0:
			err = fmt.Errorf("headers are for an HTTP server (url), not a command")
		case strings.HasPrefix(s.Cwd, "/") || strings.Contains("/"+s.Cwd+"/", "/../"):
			err = fmt.Errorf("cwd %q must be a directory inside the workspace, relative to it", s.Cwd)
		case s.TimeoutMs < 0 || s.TimeoutMs > MaxMCPTimeoutMs:
			err = fmt.Errorf("timeoutMs must be from 0 (the default, %d) to %d", DefaultMCPTimeoutMs, MaxMCPTimeoutMs)
		}
		if err != nil {
			return nil, fmt.Errorf("server %q: %w", name, err)
		}
		if u, err := url.Parse(s.URL); err == nil && u.User != nil {
			return nil, fmt.Errorf("server %q: put the URL's credentials in headers as $VARIABLE, not in the url", name)
		}
		if s.TimeoutMs == 0 {
			s.TimeoutMs = DefaultMCPTimeoutMs
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func checkMCPServers(v string) string {
	if _, err := ParseMCPServers(v); err != nil {
		return err.Error()
	}
	return ""
}

// validMCPName accepts a server name: 1 to 32 letters, digits and -, so
// that mcp__<server>__<tool> splits at its first "__".
func validMCPName(s string) bool { return s != "" && validName(s, "-", 32) }

// validName accepts at most max letters, digits and runes of extra.
func validName(s, extra string, max int) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(extra, c)) {
			return false
		}
	}
	return len(s) <= max
}

// ProjectMCPFile is a project's MCP servers, at its workspace's root, in
// Claude Code's format: {"mcpServers": {NAME: {command, args, env} or
// {"type": "http", url, headers}}}.
const ProjectMCPFile = ".mcp.json"

// maxProjectMCP bounds the .mcp.json read.
const maxProjectMCP = 64 << 10

// ReadProjectMCP reads workspace's .mcp.json (none: no servers). The file
// is hostile input (a model can write it): a link is not followed, a
// FIFO not waited on, at most 64 KB read, and each problem is one line
// naming the file.
func ReadProjectMCP(workspace string) (servers []MCPServer, err error) {
	path := filepath.Join(workspace, ProjectMCPFile)
	defer func() {
		if err != nil {
			servers, err = nil, fmt.Errorf("%s: %s", path, line.Fold(err.Error()))
		}
	}()
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case errors.Is(err, syscall.ELOOP):
		return nil, errors.New("a symbolic link, not followed")
	case err != nil:
		return nil, errors.Unwrap(err) // the path is said once
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	b, err := io.ReadAll(io.LimitReader(f, maxProjectMCP+1))
	var doc struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	switch {
	case err != nil:
		return nil, err
	case len(b) > maxProjectMCP:
		return nil, fmt.Errorf("larger than %d KB", maxProjectMCP>>10)
	case json.Unmarshal(b, &doc) != nil:
		return nil, errors.New(`not JSON of the form {"mcpServers": {NAME: {"command", "args", "env"} or {"type": "http", "url", "headers"}}}`)
	}
	text, _ := json.Marshal(doc.MCPServers)
	if servers, err = ParseMCPServers(string(text)); err != nil {
		return nil, err
	}
	for i := range servers {
		servers[i].Project = path
	}
	return servers, nil
}

// Fingerprint names the server's definition in workspace, for
// mcp.allowed: a changed definition, or the same one in another
// workspace (whose relative paths name other programs), needs allowing
// again.
func (s MCPServer) Fingerprint(workspace string) string {
	def, _ := json.Marshal(s)
	sum := sha256.Sum256(append([]byte(filepath.Clean(workspace)+"\x00"), def...))
	return s.Name + "@" + hex.EncodeToString(sum[:8])
}

// AllowMCP adds fingerprint (MCPServer.Fingerprint) to mcp.allowed in the
// settings file, as SetAutoRetry persists retry.enabled.
func AllowMCP(file, fingerprint string) error {
	return persist(file, "mcp", "allowed", func(n *yaml.Node) {
		if n.Kind != yaml.SequenceNode {
			*n = yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		}
		if !slices.ContainsFunc(n.Content, func(it *yaml.Node) bool { return it.Value == fingerprint }) {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: fingerprint})
		}
	})
}
