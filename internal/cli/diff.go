package cli

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/tools"
	"github.com/durableagent/durableagent/internal/worktree"
)

const diffUsage = "starter diff [--session ID] [--from N [--to M]]"

// runDiff prints the change of a session's job: `git diff <base>` in its
// worktree, untracked files included (worktree.Diff). The worktree is on
// the worker host that created the session, so diff runs there: on
// another host it says so instead of printing nothing. The worktree's
// place is read through the workers. With --from it prints the change
// between checkpoints N and M (or the workspace now) instead.
func runDiff(ctx context.Context, env Env, args []string) int {
	c := newFlags("diff", env)
	from := c.fs.Int("from", 0, "the change since checkpoint N (starter checkpoints)")
	to := c.fs.Int("to", 0, "with --from: up to checkpoint M (default: the workspace now)")
	if !c.parseArgs(env, args, 0, diffUsage) {
		return ExitUsage
	}
	if (*from > 0 || *to != 0) && (*from <= 0 || *to < 0) {
		return fail(env, "diff", errors.New("--from N needs a checkpoint number of 1 or more, and --to M one too (usage: "+diffUsage+")"))
	}
	return c.dialed(ctx, func(k *client.Controller, s settings.Settings) int {
		if *from > 0 {
			return checkpointDiff(ctx, env, k, s, c.session, *from, *to)
		}
		h, err := c.readHeader(s, c.session)
		if err != nil {
			return fail(env, "diff", err)
		}
		wt := h.Worktree
		if wt == nil {
			return fail(env, "diff", fmt.Errorf("session %s has no worktree: only sessions started with starter prompt --worktree have a diff", c.session))
		}
		if err := worktreeHere(c.session, wt); err != nil {
			return fail(env, "diff", err)
		}
		g, done, err := worktreeGit(s)
		if err != nil {
			return fail(env, "diff", err)
		}
		defer done()
		d, err := g.Diff(ctx, wt.Dir, wt.Base)
		if err != nil {
			return fail(env, "diff", err)
		}
		if d == "" {
			fmt.Fprintf(env.Stderr, "starter diff: no changes on branch %s since %s\n", wt.Branch, wt.Base[:min(7, len(wt.Base))])
			return ExitOK
		}
		fmt.Fprintln(env.Stdout, d)
		return ExitOK
	})
}

// worktreeGit runs worktrees' git where sessions' bash calls run: in the
// sandbox this machine's worker would use (worktree.Git); done ends it.
func worktreeGit(s settings.Settings) (g worktree.Git, done func(), err error) {
	r, _, err := app.ToolRunner(s, false)
	done = func() {}
	if c, ok := r.(interface{ Close() error }); ok {
		done = func() { c.Close() }
	}
	return worktree.Git{Runner: r, Env: tools.ScrubEnv(os.Environ(), s.Tools.EnvAllow)}, done, err
}

// worktreeHere refuses a worktree that is not on this host: it lives on
// the host of the worker that created the session.
func worktreeHere(id string, wt *session.Worktree) error {
	if fi, err := os.Stat(wt.Dir); err == nil && fi.IsDir() {
		return nil
	}
	return fmt.Errorf("the worktree of session %s (%s, branch %s) is not on this host: run starter diff on the host of the worker that created the session", id, wt.Dir, wt.Branch)
}

// checkWorktree refuses --worktree before anything starts where this
// host can tell: for a session in the store that has no worktree (a
// session keeps its workspace), and for a new session's workspace that is
// here and not inside a git repository, and for a session id git would
// refuse in a branch name. The rest is the worker's to check
// (the prompt then fails saying why).
func (c *common) checkWorktree(s settings.Settings, id, ws string) error {
	if err := worktree.CheckBranch(id); err != nil {
		return err
	}
	if h, err := c.readHeader(s, id); err == nil {
		if h.Worktree == nil {
			return fmt.Errorf("session %s exists without a worktree (workspace %s): --worktree gives a new session one; start a new session or drop --worktree", id, h.Cwd)
		}
		return nil // it keeps its worktree
	}
	if ws == "" {
		return nil
	}
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return nil
	}
	if !worktree.InRepo(ws) {
		return fmt.Errorf("workspace %s is not in a git repository: --worktree needs one (git init, or --workspace DIR of a repository)", ws)
	}
	return nil
}
