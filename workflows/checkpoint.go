package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
)

// changeCheckpoints gates the checkpoints and the evidence of a lost call
// (docs/spec.md 20). Added 2026-12-07 after v0.1.0; remove the gate and
// its old branch (no checkpoint) in the first release after 2027-01-06
// (19.3).
const changeCheckpoints = "checkpoints"

// maxCheckpointCalls bounds the calls a checkpoint names.
const maxCheckpointCalls = 20

// checkpoints is a run's account of its workspace's checkpoints.
type checkpoints struct {
	on, asked bool // the gate allows them; the gate was read
	// id is the newest checkpoint the run knows ("": none, or not taken);
	// next, while not nil, the one being taken, of input in.
	id   string
	next workflow.Future
	in   activities.CheckpointInput
	// dirty: calls that may change files ran since the last one was
	// started (calls names them); started: one was started in this run.
	dirty, started bool
	calls          []string
	more           int
}

// checkpointAhead starts the checkpoint of the coming turn with its model
// call, so it is taken while the model answers, off the tool step's path
// (docs/spec.md 20.1): at a run's first model call (only where the
// session's store exists: a first checkpoint hashes every file, so a turn
// that needs one takes it), and after a turn whose calls may change files.
// It records the conversation's leaf and the calls since the last one; a
// workspace whose files equal the newest checkpoint's adds none. A session
// without a workspace has none.
func (r *run) checkpointAhead(ctx workflow.Context) {
	k := &r.ckpt
	if !k.asked {
		k.asked = true
		k.on = r.Workspace != "" && workflow.GetVersion(ctx, changeCheckpoints, workflow.DefaultVersion, 1) != workflow.DefaultVersion
	}
	if !k.on || k.next != nil || (k.started && !k.dirty) {
		return
	}
	k.in = r.checkpointInput()
	if k.in.Existing = !k.started; len(k.in.Calls) == 0 {
		k.in.Calls = []string{"(before the prompt)"}
	}
	k.next = workflow.ExecuteActivity(r.checkpointOptions(ctx, "ckpt-"+r.LeafID), activities.CheckpointName, k.in)
	k.started = true
}

// checkpointInput is the Checkpoint activity's input at the leaf, naming
// the calls since the last checkpoint; they are then counted as recorded.
func (r *run) checkpointInput() activities.CheckpointInput {
	k := &r.ckpt
	in := activities.CheckpointInput{SessionID: r.in.SessionID, Workspace: r.Workspace, Leaf: r.LeafID, Calls: k.calls}
	if k.more > 0 {
		in.Calls = append(in.Calls, fmt.Sprintf("... and %d more", k.more))
	}
	k.calls, k.more, k.dirty = nil, 0, false
	return in
}

// checkpointTurn waits for the turn's checkpoint when one of its calls may
// change files (a call whose spec is not read-only), so the calls start
// from recorded files, and counts those calls for the next checkpoint. A
// failure is a checkpoint_warning event; the turn goes on.
func (r *run) checkpointTurn(ctx workflow.Context, calls []*toolCall) {
	for _, c := range calls {
		if c.spec.ReadOnly {
			continue
		}
		r.awaitCheckpoint(ctx, true)
		k := &r.ckpt
		k.dirty = k.on
		if len(k.calls) < maxCheckpointCalls {
			k.calls = append(k.calls, line.Cut(c.ref.Name+" "+c.ref.Summary, 80))
		} else {
			k.more++
		}
	}
}

// awaitCheckpoint waits for the checkpoint being taken, if one is; with
// need, a first one left out because the session had no store is taken.
func (r *run) awaitCheckpoint(ctx workflow.Context, need bool) {
	k := &r.ckpt
	if k.next == nil {
		return
	}
	res := r.checkpointResult(ctx, k.next)
	k.next, k.id = nil, res.ID
	if need && k.in.Existing && res == (activities.CheckpointResult{}) {
		k.in.Existing = false
		k.id = r.checkpointResult(ctx, workflow.ExecuteActivity(r.checkpointOptions(ctx, "ckpt-first-"+k.in.Leaf),
			activities.CheckpointName, k.in)).ID
	}
}

// closeCheckpoint records the workspace at the end of a run (a prompt's
// end, or its continue-as-new) when calls changed it after its last
// checkpoint, so starter rewind finds nothing unrecorded after a prompt.
func (r *run) closeCheckpoint(ctx workflow.Context) {
	r.awaitCheckpoint(ctx, false)
	if r.ckpt.dirty {
		r.ckpt.id = r.checkpointResult(ctx, workflow.ExecuteActivity(r.checkpointOptions(ctx, "ckpt-end-"+r.LeafID),
			activities.CheckpointName, r.checkpointInput())).ID
	}
}

// checkpointResult is a Checkpoint activity's result; a failure is a
// checkpoint_warning event and no id.
func (r *run) checkpointResult(ctx workflow.Context, f workflow.Future) (res activities.CheckpointResult) {
	if err := f.Get(ctx, &res); err != nil {
		res.Warning = "checkpoint not taken: " + rootMessage(err)
	}
	if res.Warning != "" {
		r.emit(ctx, agent.Event{Type: agent.EventCheckpointWarning, Reason: res.Warning})
	}
	return res
}

// checkpointEvidence is what the workspace changed since the turn's
// checkpoint, for the result of a call whose outcome is unknown ("" when
// the turn has no checkpoint or the evidence cannot be read).
func (r *run) checkpointEvidence(ctx workflow.Context, c *toolCall) string {
	if r.ckpt.id == "" {
		return ""
	}
	in := activities.CheckpointInput{SessionID: r.in.SessionID, Workspace: r.Workspace, Since: r.ckpt.id}
	var res activities.CheckpointResult
	_ = workflow.ExecuteActivity(r.checkpointOptions(ctx, "evidence-"+c.resultID), activities.CheckpointName, in).Get(ctx, &res)
	return res.Evidence
}
