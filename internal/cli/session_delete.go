package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

// sessionDelete deletes a session through the workers (the DeleteSession
// workflow): the session in the workers' store and the full outputs of
// its truncated bash calls in its workspace, which only a worker may
// reach. It runs under the session's workflow id, so a session that runs
// a prompt, a compaction or a user command is busy and nothing is
// deleted. --session is required: deleting the default session by
// omission would be a surprise.
func sessionDelete(ctx context.Context, env Env, c *common, store string, force bool) int {
	const name = "session delete"
	if store != "" {
		return fail(env, name, errors.New("--store does not apply: the workers delete the session from their own store (session.store)"))
	}
	if !c.fs.Changed("session") {
		return fail(env, name, errors.New("--session ID is required"))
	}
	return c.dialed(ctx, func(k *client.Controller, s settings.Settings) int {
		res, err := k.DeleteSession(ctx, workflows.DeleteSessionInput{SessionID: c.session, HostWaitMs: s.Tools.HostWaitMs, Force: force})
		if err != nil {
			return fail(env, name, err)
		}
		msg := "deleted session " + res.SessionID
		if res.OutputsDir != "" {
			msg += " and its full bash outputs in " + res.OutputsDir
		}
		if res.Worktree != "" {
			msg += ", removed its worktree " + res.Worktree + " and branch " + res.Branch
		}
		if res.Unmerged > 0 {
			msg += fmt.Sprintf(" with %d commit(s) no other branch has; git -C %s branch %s %s brings it back (until git gc prunes them)", res.Unmerged, res.Repo, res.Branch, res.Tip)
		}
		printOut(env.Stdout, c.json, res, func(w io.Writer) { fmt.Fprintln(w, msg) })
		return ExitOK
	})
}
