package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/tools"
)

// runMCP is `starter mcp list|tools NAME|allow NAME` in a workspace
// (--workspace, default the current directory), with the settings of a
// worker of this host and its sandbox (docs/tools.md, "See them");
// serve is runMCPServe.
func runMCP(ctx context.Context, env Env, args []string) int {
	if len(args) > 0 && args[0] == "serve" {
		return runMCPServe(ctx, env, args[1:])
	}
	c := bareFlags("mcp", env)
	dir := c.fs.String("workspace", ".", "the workspace whose .mcp.json counts and where the servers start")
	if !c.parse(env, args) {
		return ExitUsage
	}
	verb, name := c.fs.Arg(0), c.fs.Arg(1)
	if n := c.fs.NArg(); !(verb == "list" && n == 1 || (verb == "tools" || verb == "allow") && n == 2) {
		return fail(env, "mcp", errors.New("usage: starter mcp list | starter mcp tools NAME | starter mcp allow NAME"))
	}
	s, vals, err := settings.Explain(settings.LoadOptions{Flags: c.fs})
	if err == nil {
		*dir, err = filepath.Abs(*dir)
	}
	if err != nil {
		return fail(env, "mcp", err)
	}
	if _, _, err := app.ToolRunner(s, false); err != nil {
		return fail(env, "mcp", err)
	}
	m := app.MCPManager(s, nil, false)
	defer m.Close()
	servers, projectErr := m.Servers(*dir)
	i := slices.IndexFunc(servers, func(srv settings.MCPServer) bool { return srv.Name == name })
	switch {
	case verb != "list" && i < 0:
		return fail(env, "mcp", fmt.Errorf("no MCP server %q in mcp.servers nor in %s/%s", name, *dir, settings.ProjectMCPFile))
	case verb == "allow" && servers[i].Project == "":
		return fail(env, "mcp", fmt.Errorf("%s is a server of mcp.servers, which starts without allowing", name))
	case verb == "allow":
		if err := settings.AllowMCP(s.File(), servers[i].Fingerprint(*dir)); err != nil {
			return fail(env, "mcp", err)
		}
		fmt.Fprintf(env.Stdout, "allowed %s of %s (%s) in %s, in mcp.allowed of %s\n", name, servers[i].Project, what(servers[i]), *dir, s.File())
		return ExitOK
	case verb == "tools":
		specs, _, problems := m.Specs(ctx, *dir, tools.ScrubEnv(os.Environ(), s.Tools.EnvAllow), []string{tools.MCPPrefix + name + "__*"})
		if len(problems) > 0 {
			return fail(env, "mcp", errors.New(strings.Join(problems, "; ")))
		}
		for _, spec := range specs {
			fmt.Fprintln(env.Stdout, strings.TrimSpace(fmt.Sprintf("%s(%s)  %s", spec.Name, params(spec.Parameters), line.First(spec.Description))))
		}
		return ExitOK
	}
	if projectErr != nil {
		fmt.Fprintln(env.Stdout, projectErr)
	}
	if len(servers) == 0 {
		fmt.Fprintf(env.Stdout, "no MCP servers: mcp.servers is empty and %s has no %s\n", *dir, settings.ProjectMCPFile)
		return ExitOK
	}
	from, _ := settings.Source(vals, "mcp.servers")
	fmt.Fprintf(env.Stdout, "MCP servers, each started in %s:\n", *dir)
	for _, srv := range servers {
		layer := "mcp.servers from " + from
		if srv.Project != "" {
			layer = srv.Project
		}
		state := m.Refusal(srv, *dir)
		if state == "" {
			_, names, problems := m.Specs(ctx, *dir, tools.ScrubEnv(os.Environ(), s.Tools.EnvAllow), []string{tools.MCPPrefix + srv.Name + "__*"})
			state = fmt.Sprintf("started: %d tools: %s", len(names), strings.Join(names, ", "))
			if len(problems) > 0 {
				state = strings.Join(problems, "; ")
			}
		}
		fmt.Fprintf(env.Stdout, "%s  %s  (%s)\n    %s\n", srv.Name, what(srv), layer, state)
	}
	return ExitOK
}

// what is a server's URL or command line.
func what(srv settings.MCPServer) string {
	if srv.URL != "" {
		return srv.URL
	}
	return strings.Join(append([]string{srv.Command}, srv.Args...), " ")
}

// params is a tool's JSON schema in one line: its parameters and their
// types, * marking the required ones.
func params(schema json.RawMessage) string {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	var out []string
	for name, p := range s.Properties {
		if slices.Contains(s.Required, name) {
			name += "*"
		}
		out = append(out, fmt.Sprintf("%s %v", name, p.Type))
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}
