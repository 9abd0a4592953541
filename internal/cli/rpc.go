package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/rpcserver"
	"github.com/durableagent/durableagent/internal/settings"
)

const rpcUsage = "starter rpc [--session ID | -c] [--workspace DIR] [--host HOST] [--mode rpc] [--protocol 1.6|0.73] [--provider P] [--model [P/]NAME[:LEVEL]] [settings flags]"

// runRPC serves one session until stdin closes: as prompt chooses it
// (resolve), so without --session or -c a new one in the current
// directory, as the terminal agent's RPC mode does. Stdout carries protocol
// only; notes and errors go to stderr. Closing stdin (or SIGINT) detaches a
// running prompt, which keeps running in Temporal, and exits 0.
func runRPC(ctx context.Context, env Env, args []string) int {
	c := newFlags("rpc", env)
	ws := c.addWorkspaceFlags()
	args, protocol, err := piArgs(args)
	if err != nil {
		return fail(env, "rpc", err)
	}
	if !c.parseArgs(env, args, 0, rpcUsage) {
		return ExitUsage
	}
	return c.backend(ctx, "rpc", ws, func(b *client.Session) int {
		srv := &rpcserver.Server{Backend: b, Protocol: protocol, Logf: func(format string, a ...any) {
			fmt.Fprintf(env.Stderr, "starter "+format+"\n", a...)
		}}
		if err := srv.Serve(ctx, env.Stdin, env.Stdout); err != nil && !errors.Is(err, context.Canceled) {
			return fail(env, "rpc", err)
		}
		return ExitOK
	})
}

// piArgs takes --protocol (the pi RPC protocol generation the client
// speaks: rpcserver.ParseProtocol) out of args and turns the terminal
// agent's flags, which its RpcClient passes (`--mode rpc`, `--provider
// P`, `--model [P/]NAME[:LEVEL]`), into ours (--model.provider,
// --model.name, --model.thinkingLevel), so the client can start `starter
// rpc` through a one-line cliPath shim unchanged.
func piArgs(args []string) ([]string, rpcserver.Protocol, error) {
	out := make([]string, 0, len(args))
	protocol := ""
	for i := 0; i < len(args); i++ {
		name, value, inline := strings.Cut(args[i], "=")
		if name == "-protocol" {
			name = "--protocol"
		}
		if name != "--mode" && name != "--provider" && name != "--model" && name != "--protocol" {
			out = append(out, args[i])
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				return nil, "", fmt.Errorf("flag %s needs a value (usage: %s)", name, rpcUsage)
			}
			i++
			value = args[i]
		}
		switch name {
		case "--protocol":
			protocol = value
		case "--mode":
			if value != "rpc" {
				return nil, "", fmt.Errorf("--mode %q: starter rpc serves mode rpc only", value)
			}
		case "--provider":
			out = append(out, "--model.provider", value)
		case "--model":
			if p, n, ok := strings.Cut(value, "/"); ok && slices.Contains(settings.Providers, p) {
				out = append(out, "--model.provider", p)
				value = n
			}
			if j := strings.LastIndexByte(value, ':'); j > 0 && slices.Contains(llm.ThinkingLevels, value[j+1:]) {
				out = append(out, "--model.thinkingLevel", value[j+1:])
				value = value[:j]
			}
			out = append(out, "--model.name", value)
		}
	}
	p, err := rpcserver.ParseProtocol(protocol)
	if err != nil {
		return nil, "", fmt.Errorf("--protocol: %w", err)
	}
	return out, p, nil
}

// backend loads the settings, chooses the session (ws.resolve), dials
// Temporal and returns what fn returns with the session's client, with
// the workspace and tool host of new sessions (ws); the settings are
// re-read before each prompt so changes made by other processes apply.
func (c *common) backend(ctx context.Context, name string, ws *workspaceFlags, fn func(b *client.Session) int) int {
	if s, ok := c.settings(c.env); !ok {
		return ExitUsage
	} else if err := ws.resolve(c, s); err != nil {
		return fail(c.env, name, err)
	}
	return c.dialed(ctx, func(k *client.Controller, s settings.Settings) int {
		b, err := client.Open(k, s, c.session)
		if err != nil {
			return fail(c.env, name, err)
		}
		b.Workspace, b.Host = ws.workspace, ws.host
		b.Reload = func() (settings.Settings, error) {
			return settings.Load(settings.LoadOptions{Flags: c.fs})
		}
		return fn(b)
	})
}
