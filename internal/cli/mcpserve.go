package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/mcpserve"
	"github.com/durableagent/durableagent/internal/settings"
)

// runMCPServe is `starter mcp serve` (package mcpserve): on stdin/stdout
// until stdin closes, or streamable HTTP with --listen, until SIGINT.
func runMCPServe(ctx context.Context, env Env, args []string) int {
	c := bareFlags("mcp serve", env)
	listen := c.fs.String("listen", "", "serve streamable HTTP at this loopback host:port instead of stdio")
	if !c.parseArgs(env, args, 0, "starter mcp serve [--listen 127.0.0.1:PORT] [settings flags]") {
		return ExitUsage
	}
	return c.dialed(ctx, func(k *client.Controller, s settings.Settings) int {
		srv := &mcpserve.Server{K: k, Settings: s, Reload: func() (settings.Settings, error) { return settings.Load(settings.LoadOptions{Flags: c.fs}) }}
		err := srv.Serve(ctx, *listen, env.Stdin, env.Stdout, func(addr string) {
			fmt.Fprintf(env.Stderr, "starter mcp serve: MCP (streamable HTTP) at http://%s/\n", addr)
		})
		if err != nil && !errors.Is(err, context.Canceled) {
			return fail(env, "mcp serve", err)
		}
		return ExitOK
	})
}
