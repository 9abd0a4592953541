package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/durableagent/durableagent/internal/rpcserver"
	"github.com/durableagent/durableagent/internal/settings"
)

const rpcUsage = "starter rpc [--session ID] [settings flags]"

var rpcCmd = Command{
	Name:    "rpc",
	Usage:   rpcUsage,
	Summary: "serve the RPC protocol on stdin/stdout: JSON commands in, responses and live events out (docs/rpc.md)",
	Run:     runRPC,
}

func init() { Register(rpcCmd) }

// runRPC serves one session until stdin closes. Stdout carries protocol
// only; notes and errors go to stderr. Closing stdin (or SIGINT) detaches a
// running prompt, which keeps running in Temporal, and exits 0.
func runRPC(ctx context.Context, env Env, args []string) int {
	c := newFlags("rpc", env)
	if !c.parse(env, args) {
		return ExitUsage
	}
	if c.fs.NArg() > 0 {
		return fail(env, "rpc", fmt.Errorf("unexpected argument %q (usage: %s)", c.fs.Arg(0), rpcUsage))
	}
	b, closeFn, ok := c.backend(ctx, env, "rpc")
	if !ok {
		return ExitUsage
	}
	defer closeFn()
	srv := &rpcserver.Server{Backend: b, Logf: func(format string, a ...any) {
		fmt.Fprintf(env.Stderr, "starter "+format+"\n", a...)
	}}
	if err := srv.Serve(ctx, env.Stdin, env.Stdout); err != nil && !errors.Is(err, context.Canceled) {
		return fail(env, "rpc", err)
	}
	return ExitOK
}

// backend loads the settings, dials Temporal and returns the session's
// backend; the settings are re-read before each prompt so changes made by
// other processes apply.
func (c *common) backend(ctx context.Context, env Env, name string) (*rpcserver.TemporalBackend, func(), bool) {
	k, s, closeFn, ok := c.controller(ctx, env)
	if !ok {
		return nil, nil, false
	}
	b, err := rpcserver.NewTemporalBackend(k, s, c.session)
	if err != nil {
		closeFn()
		fail(env, name, err)
		return nil, nil, false
	}
	b.Reload = func() (settings.Settings, error) {
		return settings.Load(settings.LoadOptions{Flags: c.fs, Env: env.LookupEnv})
	}
	return b, closeFn, true
}
