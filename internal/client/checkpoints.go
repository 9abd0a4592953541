package client

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/internal/checkpoint"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

// Checkpoints are a session's header, checkpoint store and checkpoints
// (docs/spec.md 20), read on the worker host that holds the workspace
// (<dataDir>/checkpoints/<session>); elsewhere OpenCheckpoints says so.
type Checkpoints struct {
	Store *checkpoint.Store
	Head  session.Header
	List  []checkpoint.Checkpoint
	k     *Controller
	id    string
}

// OpenCheckpoints opens session id's checkpoints, with the worker's
// limits from s as internal/app sets them.
func (k *Controller) OpenCheckpoints(ctx context.Context, s settings.Settings, id string) (*Checkpoints, error) {
	h, err := k.ReadHeader(ctx, id)
	if err != nil {
		return nil, err
	}
	dir := activities.CheckpointDir(s.DataDir, id)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("session %s has no checkpoints in %s: run this on the host of the worker that runs its tools (host %q), with its data dir", id, dir, h.Host)
	}
	st, err := checkpoint.Open(dir, checkpoint.Limits{KeepCount: s.Checkpoints.Keep, KeepBytes: s.Checkpoints.MaxBytes})
	c := &Checkpoints{Store: st, Head: h, k: k, id: id}
	if err == nil {
		c.List, err = st.List(ctx)
	}
	return c, err
}

// Checkpoints opens the served session's checkpoints (OpenCheckpoints).
func (t *Session) Checkpoints(ctx context.Context) (*Checkpoints, error) {
	return t.k.OpenCheckpoints(ctx, t.Settings(), t.SessionID())
}

// ByNumber is checkpoint n, or a one-line error.
func (c *Checkpoints) ByNumber(n int) (checkpoint.Checkpoint, error) {
	for _, cp := range c.List {
		if cp.N == n {
			return cp, nil
		}
	}
	return checkpoint.Checkpoint{}, fmt.Errorf("no checkpoint %d in session %s (starter checkpoints lists them)", n, c.id)
}

// Listing writes the checkpoints oldest first, two lines each: number,
// time, the tool calls that ran between it and the next one (the next
// one's Calls), and the paths those changed; for the newest, the changes
// no checkpoint recorded since (to the workspace now).
func (c *Checkpoints) Listing(ctx context.Context, w io.Writer) error {
	for i, cp := range c.List {
		to, calls := "", []string{"(not recorded)"}
		if i+1 < len(c.List) {
			to, calls = c.List[i+1].ID, c.List[i+1].Calls
		}
		changes, err := c.Store.Changes(ctx, c.Head.Cwd, cp.ID, to)
		if err != nil {
			return err
		}
		paths := make([]string, len(changes))
		for i, ch := range changes {
			paths[i] = ch.Kind + " " + ch.Path
		}
		fmt.Fprintf(w, "%d  %s  then: %s\n    changed: %s\n", cp.N, cp.Time.Local().Format(time.DateTime),
			strings.Join(calls, "; "), cmp.Or(strings.Join(paths, ", "), "nothing"))
	}
	return nil
}

// Rewind restores the workspace files of checkpoint to and continues the
// session's conversation from there (docs/spec.md 20.5), and returns the
// checkpoint that undoes it. It refuses in one line while a prompt runs,
// and when the workspace has changes no checkpoint recorded unless force.
// The conversation moves with a SessionWrite; the files are restored
// after a checkpoint of the workspace as it was (the undo).
func (c *Checkpoints) Rewind(ctx context.Context, to int, force bool) (undo int, err error) {
	target, err := c.ByNumber(to)
	if err != nil {
		return 0, err
	}
	if status, _, err := c.k.RunStatus(ctx, c.id, ""); err == nil && status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return 0, fmt.Errorf("session %s is running a prompt: rewind it once the prompt has ended (starter abort, or Esc in the chat, stops it)", c.id)
	}
	ws, last := c.Head.Cwd, c.List[len(c.List)-1]
	changes, err := c.Store.Changes(ctx, ws, last.ID, "")
	if err != nil {
		return 0, err
	}
	if len(changes) > 0 && !force {
		return 0, fmt.Errorf("the workspace has %d changes no checkpoint recorded (%s %s, ...; starter diff --from %d shows them): --force rewinds all the same, recording them first",
			len(changes), changes[0].Kind, changes[0].Path, last.N)
	}
	note, _ := json.Marshal(map[string]int{"checkpoint": to, "undo": last.N + 1})
	entry := session.Entry{Type: session.TypeCustom, ID: newEntryID(), Timestamp: time.Now().UTC(), CustomType: "rewind", Data: note}
	run, err := c.k.StartSessionWrite(ctx, workflows.SessionWriteInput{SessionID: c.id, At: target.Leaf, Entries: []session.Entry{entry}})
	var res workflows.SessionWriteResult
	if err == nil {
		err = run.Get(ctx, &res)
	}
	if err != nil {
		return 0, err
	}
	// The workspace before and after the restore, recorded: the first
	// (number last.N+1) undoes the rewind, the second leaves nothing
	// unrecorded.
	calls := []string{fmt.Sprintf("(rewind to %d)", to)}
	if _, err := c.Store.Take(ctx, ws, checkpoint.Turn{Leaf: res.LeafID, Calls: calls}); err != nil {
		return 0, fmt.Errorf("the conversation is back at checkpoint %d, its files are not: %w", to, err)
	}
	if err := c.Store.Restore(ctx, ws, target.ID); err != nil {
		return 0, fmt.Errorf("the conversation is back at checkpoint %d, its files are not: %w (rewind to %d undoes it)", to, err, last.N+1)
	}
	calls[0] = fmt.Sprintf("(rewound to %d)", to)
	_, err = c.Store.Take(ctx, ws, checkpoint.Turn{Leaf: entry.ID, Calls: calls})
	return last.N + 1, err
}
