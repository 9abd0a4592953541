package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/worktree"
	"github.com/durableagent/durableagent/workflows"
)

const forkUsage = "starter fork [--session ID] --at N --as ID2 [--worktree]"

// runFork makes session ID2 from checkpoint N of a session: its
// conversation up to N's turn (a fork, as RPC's fork makes) and a
// workspace holding N's files at <dataDir>/worktrees/ID2, a git worktree
// on branch agent/ID2 (--worktree) or a new directory. The session and
// its workspace stay as they are (docs/spec.md 20.5a).
func runFork(ctx context.Context, env Env, args []string) int {
	c := newFlags("fork", env)
	at := c.fs.Int("at", 0, "the checkpoint whose files and conversation the new session starts from (starter checkpoints)")
	as := c.fs.String("as", "", "the new session's id")
	git := c.fs.Bool("worktree", false, "the new workspace is a git worktree of the session's repository (branch agent/ID2), not a plain copy")
	if !c.parseArgs(env, args, 0, forkUsage) {
		return ExitUsage
	}
	if *at <= 0 || *as == "" {
		return fail(env, "fork", errors.New("missing --at N, the checkpoint, or --as ID2, the new session (usage: "+forkUsage+")"))
	}
	if err := session.ValidateID(*as); err != nil { // it names a directory under the data dir
		return fail(env, "fork", fmt.Errorf("--as: %w", err))
	}
	return c.dialed(ctx, func(k *client.Controller, s settings.Settings) int {
		if err := c.fork(ctx, env, k, s, *at, *as, *git); err != nil {
			return fail(env, "fork", err)
		}
		return ExitOK
	})
}

// fork is starter fork's work, once the flags are read.
func (c *common) fork(ctx context.Context, env Env, k *client.Controller, s settings.Settings, at int, as string, git bool) error {
	if _, err := c.readHeader(s, as); !errors.Is(err, session.ErrNotFound) {
		return cmp.Or(err, fmt.Errorf("session %s exists: choose another --as", as))
	}
	dir := filepath.Join(s.DataDir, "worktrees", as)
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("%s exists: choose another --as, or remove it", dir)
	}
	cps, err := k.OpenCheckpoints(ctx, s, c.session)
	if err != nil {
		return err
	}
	target, err := cps.ByNumber(at)
	if err != nil {
		return err
	}
	where := session.Header{Cwd: dir}
	if git {
		g, done, err := worktreeGit(s)
		defer done()
		if err != nil {
			return err
		}
		info, err := g.Create(ctx, cps.Head.Cwd, dir, worktree.Branch(as))
		if err != nil {
			return err
		}
		where = session.Header{Cwd: info.Workspace, Worktree: &session.Worktree{Dir: info.Dir, Branch: info.Branch, Base: info.Base, Repo: info.Repo}}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := cps.Store.RestoreTo(ctx, where.Cwd, target.ID); err != nil {
		return err
	}
	run, err := k.StartSessionWrite(ctx, workflows.SessionWriteInput{SessionID: as, ForkFrom: c.session, ForkThrough: target.Leaf, ForkWorkspace: &where})
	if err == nil {
		err = run.Get(ctx, nil)
	}
	if err != nil {
		return fmt.Errorf("%s holds checkpoint %d's files, the session is not made: %w", where.Cwd, at, err)
	}
	fmt.Fprintf(env.Stdout, "session %s: the conversation and files of session %s at checkpoint %d, workspace %s\n", as, c.session, at, where.Cwd)
	return nil
}
