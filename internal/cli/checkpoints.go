package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/internal/checkpoint"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
)

const checkpointsUsage = "starter checkpoints [--session ID]"

// maxCheckpointDiff bounds what starter diff --from prints.
const maxCheckpointDiff = 4 << 20

// sessionCheckpoints are a session's checkpoint store and workspace. The
// store is on the worker host that holds the workspace
// (<dataDir>/checkpoints/<session>), so the commands that read it run
// there, as starter diff does; elsewhere they say so.
type sessionCheckpoints struct {
	store     *checkpoint.Store
	workspace string
	list      []checkpoint.Checkpoint
}

func (c *common) openCheckpoints(ctx context.Context, s settings.Settings) (*sessionCheckpoints, error) {
	h, err := c.readHeader(s, c.session)
	if errors.Is(err, session.ErrNotFound) {
		return nil, fmt.Errorf("no session %q in the workers' session store", c.session)
	}
	if err != nil {
		return nil, err
	}
	dir := activities.CheckpointDir(s.DataDir, c.session)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("session %s has no checkpoints in %s: run this on the host of the worker that runs its tools (host %q), with its data dir", c.session, dir, h.Host)
	}
	st, err := checkpoint.Open(dir, checkpoint.Limits{})
	if err != nil {
		return nil, err
	}
	list, err := st.List(ctx)
	if err != nil {
		return nil, err
	}
	return &sessionCheckpoints{store: st, workspace: h.Cwd, list: list}, nil
}

// byNumber is checkpoint n (its label's number), or a one-line error.
func (k *sessionCheckpoints) byNumber(c *common, n int) (checkpoint.Checkpoint, error) {
	for _, cp := range k.list {
		if activities.LabelOf(cp).N == n {
			return cp, nil
		}
	}
	return checkpoint.Checkpoint{}, fmt.Errorf("no checkpoint %d in session %s (starter checkpoints lists them)", n, c.session)
}

// runCheckpoints lists a session's checkpoints, oldest first: number,
// time, the tool calls of the turn it was taken before, and the paths
// those changed (to the next checkpoint, or to the workspace now).
func runCheckpoints(ctx context.Context, env Env, args []string) int {
	c := newFlags("checkpoints", env)
	if !c.parseNoArgs(env, args, checkpointsUsage) {
		return ExitUsage
	}
	s, ok := c.settings(env)
	if !ok {
		return ExitUsage
	}
	defer c.closeReader()
	k, err := c.openCheckpoints(ctx, s)
	if err != nil {
		return fail(env, "checkpoints", err)
	}
	for i, cp := range k.list {
		to := ""
		if i+1 < len(k.list) {
			to = k.list[i+1].ID
		}
		changes, err := k.store.Changes(ctx, k.workspace, cp.ID, to)
		if err != nil {
			return fail(env, "checkpoints", err)
		}
		var paths []string
		for _, ch := range changes {
			paths = append(paths, ch.Kind+" "+ch.Path)
		}
		if paths == nil {
			paths = []string{"nothing"}
		}
		l := activities.LabelOf(cp)
		fmt.Fprintf(env.Stdout, "%d  %s  %s\n    changed: %s\n", l.N, cp.Time.Local().Format(time.DateTime),
			strings.Join(l.Calls, "; "), strings.Join(paths, ", "))
	}
	return ExitOK
}

// checkpointDiff prints the diff between checkpoints from and to (0: the
// workspace now): starter diff --from N [--to M].
func (c *common) checkpointDiff(ctx context.Context, env Env, s settings.Settings, from, to int) int {
	k, err := c.openCheckpoints(ctx, s)
	var a, b checkpoint.Checkpoint
	if err == nil {
		a, err = k.byNumber(c, from)
	}
	if err == nil && to > 0 {
		b, err = k.byNumber(c, to)
	}
	var d string
	if err == nil {
		d, err = k.store.Diff(ctx, k.workspace, a.ID, b.ID, maxCheckpointDiff)
	}
	if err != nil {
		return fail(env, "diff", err)
	}
	fmt.Fprint(env.Stdout, d)
	return ExitOK
}
