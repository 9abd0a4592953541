package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/mcp"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/tools"
)

// runMCP is `starter mcp list`: the servers of mcp.servers, the settings
// layer that defined them, and whether each starts here with its tools:
// in the current directory, in the sandbox a worker started here with
// these settings would run it in (app.ToolRunner), with bash's environment.
func runMCP(ctx context.Context, env Env, args []string) int {
	if len(args) > 0 && args[0] == "serve" {
		return runMCPServe(ctx, env, args[1:])
	}
	c := bareFlags("mcp", env)
	if !c.parse(env, args) {
		return ExitUsage
	}
	if c.fs.NArg() != 1 || c.fs.Arg(0) != "list" {
		return fail(env, "mcp", errors.New("usage: starter mcp list"))
	}
	s, vals, err := settings.Explain(settings.LoadOptions{Flags: c.fs})
	if err != nil {
		return fail(env, "mcp", err)
	}
	servers, _ := settings.ParseMCPServers(s.MCP.Servers) // Explain checked them
	if len(servers) == 0 {
		fmt.Fprintln(env.Stdout, "no MCP servers: mcp.servers is empty")
		return ExitOK
	}
	runner, _, err := app.ToolRunner(s, false)
	if err != nil {
		return fail(env, "mcp", err)
	}
	dir, _ := os.Getwd()
	from, _ := settings.Source(vals, "mcp.servers")
	fmt.Fprintf(env.Stdout, "mcp.servers from %s, each started in %s:\n", from, dir)
	m := mcp.New(servers, runner)
	defer m.Close()
	for _, srv := range servers {
		what := srv.URL
		if what == "" {
			what = strings.Join(append([]string{srv.Command}, srv.Args...), " ")
		}
		_, names, problems := m.Specs(ctx, dir, tools.ScrubEnv(os.Environ(), s.Tools.EnvAllow), []string{tools.MCPPrefix + srv.Name + "__*"})
		state := fmt.Sprintf("started: %d tools: %s", len(names), strings.Join(names, ", "))
		if len(problems) > 0 {
			state = strings.Join(problems, "; ")
		}
		fmt.Fprintf(env.Stdout, "%s  %s\n    %s\n", srv.Name, what, state)
	}
	return ExitOK
}
