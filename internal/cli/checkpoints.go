package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/internal/checkpoint"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

const checkpointsUsage = "starter checkpoints [--session ID]"

// maxCheckpointDiff bounds what starter diff --from prints.
const maxCheckpointDiff = 4 << 20

// sessionCheckpoints are a session's header, checkpoint store and
// checkpoints. The store is on the worker host that holds the workspace
// (<dataDir>/checkpoints/<session>), so the commands that read it run
// there, as starter diff does; elsewhere they say so.
type sessionCheckpoints struct {
	store *checkpoint.Store
	head  session.Header
	list  []checkpoint.Checkpoint
}

func (c *common) openCheckpoints(ctx context.Context, s settings.Settings) (*sessionCheckpoints, error) {
	h, err := c.sessionHeader(s, c.session)
	if err != nil {
		return nil, err
	}
	dir := activities.CheckpointDir(s.DataDir, c.session)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("session %s has no checkpoints in %s: run this on the host of the worker that runs its tools (host %q), with its data dir", c.session, dir, h.Host)
	}
	st, err := checkpoint.Open(dir, checkpoint.Limits{KeepCount: s.Checkpoints.Keep, KeepBytes: s.Checkpoints.MaxBytes}) // the worker's, as internal/app sets them
	k := &sessionCheckpoints{store: st, head: h}
	if err == nil {
		k.list, err = st.List(ctx)
	}
	return k, err
}

// byNumber is checkpoint n, or a one-line error.
func (k *sessionCheckpoints) byNumber(c *common, n int) (checkpoint.Checkpoint, error) {
	for _, cp := range k.list {
		if cp.N == n {
			return cp, nil
		}
	}
	return checkpoint.Checkpoint{}, fmt.Errorf("no checkpoint %d in session %s (starter checkpoints lists them)", n, c.session)
}

// at is checkpoint n and the entry its conversation ends at: the parent
// of its turn's entry, or its Leaf.
func (k *sessionCheckpoints) at(ctx context.Context, c *common, ctl *client.Controller, n int) (checkpoint.Checkpoint, string, error) {
	cp, err := k.byNumber(c, n)
	if err != nil || cp.EntryID == "" {
		return cp, cp.Leaf, err
	}
	e, ok, err := ctl.ReadEntry(ctx, c.session, cp.EntryID)
	if err == nil && !ok {
		err = fmt.Errorf("checkpoint %d's turn (entry %s) is not in session %s", n, cp.EntryID, c.session)
	}
	return cp, e.ParentID, err
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
		changes, err := k.store.Changes(ctx, k.head.Cwd, cp.ID, to)
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
		fmt.Fprintf(env.Stdout, "%d  %s  %s\n    changed: %s\n", cp.N, cp.Time.Local().Format(time.DateTime),
			strings.Join(cp.Calls, "; "), strings.Join(paths, ", "))
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
		d, err = k.store.Diff(ctx, k.head.Cwd, a.ID, b.ID, maxCheckpointDiff)
	}
	if err != nil {
		return fail(env, "diff", err)
	}
	fmt.Fprint(env.Stdout, d)
	return ExitOK
}

const rewindUsage = "starter rewind [--session ID] --to N [--force]"

// runRewind restores the workspace files of checkpoint N and continues the
// session's conversation from there (docs/spec.md 20.5). The conversation
// moves with a SessionWrite, which refuses while a prompt runs; the files
// are restored after a checkpoint of the workspace as it was, so a rewind
// is undone by rewinding to that one.
func runRewind(ctx context.Context, env Env, args []string) int {
	c := newFlags("rewind", env)
	to := c.fs.Int("to", 0, "the checkpoint to go back to (starter checkpoints)")
	force := c.fs.Bool("force", false, "rewind even when the workspace has changes no checkpoint recorded (they are recorded first)")
	if !c.parseNoArgs(env, args, rewindUsage) {
		return ExitUsage
	}
	if *to <= 0 {
		return fail(env, "rewind", errors.New("missing --to N, the checkpoint to go back to (usage: "+rewindUsage+")"))
	}
	k, s, closeFn, ok := c.controller(ctx, env)
	if !ok {
		return ExitUsage
	}
	defer closeFn()
	if err := c.rewind(ctx, env, k, s, *to, *force); err != nil {
		return fail(env, "rewind", err)
	}
	return ExitOK
}

// rewind is starter rewind's work, once the flags are read.
func (c *common) rewind(ctx context.Context, env Env, k *client.Controller, s settings.Settings, to int, force bool) error {
	cps, err := c.openCheckpoints(ctx, s)
	if err != nil {
		return err
	}
	target, leaf, err := cps.at(ctx, c, k, to)
	if err != nil {
		return err
	}
	if status, _, err := k.RunStatus(ctx, c.session, ""); err == nil && status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return fmt.Errorf("session %s is running a prompt: rewind it once the prompt has ended (starter abort stops it)", c.session)
	}
	ws, last := cps.head.Cwd, cps.list[len(cps.list)-1]
	changes, err := cps.store.Changes(ctx, ws, last.ID, "")
	if err != nil {
		return err
	}
	if len(changes) > 0 && !force {
		return fmt.Errorf("the workspace has %d changes no checkpoint recorded (%s %s, ...; starter diff --from %d shows them): --force rewinds all the same, recording them first",
			len(changes), changes[0].Kind, changes[0].Path, last.N)
	}
	note, _ := json.Marshal(map[string]int{"checkpoint": to, "undo": last.N + 1})
	entry := session.Entry{Type: session.TypeCustom, ID: fmt.Sprintf("%08x", rand.Uint32()), Timestamp: time.Now().UTC(), CustomType: "rewind", Data: note}
	run, err := k.StartSessionWrite(ctx, workflows.SessionWriteInput{SessionID: c.session, At: leaf, Entries: []session.Entry{entry}})
	var res workflows.SessionWriteResult
	if err == nil {
		err = run.Get(ctx, &res)
	}
	if err != nil {
		return err
	}
	// The workspace before and after the restore, recorded: the first
	// (number last.N+1) undoes the rewind, the second leaves nothing
	// unrecorded.
	calls := []string{fmt.Sprintf("(rewind to %d)", to)}
	if _, err := cps.store.Take(ctx, ws, checkpoint.Turn{Leaf: res.LeafID, Calls: calls}); err != nil {
		return fmt.Errorf("the conversation is back at checkpoint %d, its files are not: %w", to, err)
	}
	if err := cps.store.Restore(ctx, ws, target.ID); err != nil {
		return fmt.Errorf("the conversation is back at checkpoint %d, its files are not: %w (starter rewind --to %d undoes it)", to, err, last.N+1)
	}
	calls[0] = fmt.Sprintf("(rewound to %d)", to)
	if _, err := cps.store.Take(ctx, ws, checkpoint.Turn{Leaf: entry.ID, Calls: calls}); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "session %s is back at checkpoint %d, files and conversation (undo: starter rewind --session %s --to %d)\n", c.session, to, c.session, last.N+1)
	return nil
}
