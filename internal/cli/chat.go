package cli

import (
	"context"
	"errors"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/tui"
)

const chatUsage = "starter chat [--session ID | -c] [--workspace DIR] [--host HOST] [settings flags]"

// runChat runs the terminal UI on one session until the user quits. A
// running prompt is detached on quit; it keeps running in Temporal.
func runChat(ctx context.Context, env Env, args []string) int {
	c := newFlags("chat", env)
	ws := c.addWorkspaceFlags()
	if !c.parseArgs(env, args, 0, chatUsage) {
		return ExitUsage
	}
	// Before Temporal is dialled (the workspace check reads the session
	// through it): without a terminal the UI cannot run (/dev/null fails
	// in epoll, a pipe would never end at EOF).
	if !isTerminal(env.Stdin) {
		return fail(env, "chat", errors.New("needs a terminal: stdin is not one (for scripts use starter prompt, or starter rpc for a JSON protocol)"))
	}
	return c.backend(ctx, "chat", ws, func(b *client.Session) int {
		if err := tui.Run(ctx, b, env.Stdin, env.Stdout); err != nil {
			return fail(env, "chat", err)
		}
		return ExitOK
	})
}
