package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/durableagent/durableagent/internal/checkpoint"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/settings"
)

const checkpointsUsage = "starter checkpoints [--session ID]"

// maxCheckpointDiff bounds what starter diff --from prints.
const maxCheckpointDiff = 4 << 20

// runCheckpoints lists a session's checkpoints, oldest first
// (client.Checkpoints.Listing).
func runCheckpoints(ctx context.Context, env Env, args []string) int {
	c := newFlags("checkpoints", env)
	if !c.parseArgs(env, args, 0, checkpointsUsage) {
		return ExitUsage
	}
	return c.dialed(ctx, func(k *client.Controller, s settings.Settings) int {
		cps, err := k.OpenCheckpoints(ctx, s, c.session)
		if err == nil {
			err = cps.Listing(ctx, env.Stdout)
		}
		if err != nil {
			return fail(env, "checkpoints", err)
		}
		return ExitOK
	})
}

// checkpointDiff prints the diff of session id between checkpoints from
// and to (0: the workspace now): starter diff --from N [--to M].
func checkpointDiff(ctx context.Context, env Env, k *client.Controller, s settings.Settings, id string, from, to int) int {
	cps, err := k.OpenCheckpoints(ctx, s, id)
	var a, b checkpoint.Checkpoint
	if err == nil {
		a, err = cps.ByNumber(from)
	}
	if err == nil && to > 0 {
		b, err = cps.ByNumber(to)
	}
	var d string
	if err == nil {
		d, err = cps.Store.Diff(ctx, cps.Head.Cwd, a.ID, b.ID, maxCheckpointDiff)
	}
	if err != nil {
		return fail(env, "diff", err)
	}
	fmt.Fprint(env.Stdout, d)
	return ExitOK
}

const rewindUsage = "starter rewind [--session ID] --to N [--force]"

// runRewind restores the workspace files of checkpoint N and continues the
// session's conversation from there (client.Checkpoints.Rewind,
// docs/spec.md 20.5), and prints the rewind that undoes it.
func runRewind(ctx context.Context, env Env, args []string) int {
	c := newFlags("rewind", env)
	to := c.fs.Int("to", 0, "the checkpoint to go back to (starter checkpoints)")
	force := c.fs.Bool("force", false, "rewind even when the workspace has changes no checkpoint recorded (they are recorded first)")
	if !c.parseArgs(env, args, 0, rewindUsage) {
		return ExitUsage
	}
	if *to <= 0 {
		return fail(env, "rewind", errors.New("missing --to N, the checkpoint to go back to (usage: "+rewindUsage+")"))
	}
	return c.dialed(ctx, func(k *client.Controller, s settings.Settings) int {
		cps, err := k.OpenCheckpoints(ctx, s, c.session)
		var undo int
		if err == nil {
			undo, err = cps.Rewind(ctx, *to, *force)
		}
		if err != nil {
			return fail(env, "rewind", err)
		}
		fmt.Fprintf(env.Stdout, "session %s is back at checkpoint %d, files and conversation (undo: starter rewind --session %s --to %d)\n", c.session, *to, c.session, undo)
		return ExitOK
	})
}
