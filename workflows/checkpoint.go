package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
)

// changeCheckpoints gates the checkpoint before a turn's file-changing
// tool calls and the evidence of a lost call (docs/spec.md 20). Added
// 2026-12-07 after v0.1.0; remove the gate and its old branch (no
// checkpoint) in the first release after 2027-01-06 (19.3).
const changeCheckpoints = "checkpoints"

// checkpointTurn takes the workspace's checkpoint before the turn's tool
// calls when one of them may change files (a call whose spec is not
// read-only): one small activity on the session's tool host. Its failure
// is a checkpoint_warning event; the turn goes on.
func (r *run) checkpointTurn(ctx workflow.Context, calls []*toolCall) {
	r.checkpointID = ""
	var names []string
	for _, c := range calls {
		if !c.spec.ReadOnly {
			names = append(names, line.Cut(c.ref.Name+" "+c.ref.Summary, 80))
		}
	}
	if len(names) == 0 || workflow.GetVersion(ctx, changeCheckpoints, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return
	}
	r.checkpointID = r.checkpoint(ctx, "ckpt-"+r.batch.EntryID, activities.CheckpointInput{EntryID: r.batch.EntryID, Calls: names})
	r.checkpointed = r.checkpointed || r.checkpointID != ""
}

// closeCheckpoint records the workspace at the end of a run that took a
// checkpoint, with the conversation's leaf, so what its last calls
// changed is recorded too (starter rewind finds nothing unrecorded after
// a prompt).
func (r *run) closeCheckpoint(ctx workflow.Context) {
	if r.checkpointed {
		r.checkpointID = r.checkpoint(ctx, "ckpt-end-"+r.LeafID, activities.CheckpointInput{Leaf: r.LeafID, Calls: []string{"(prompt end)"}})
	}
}

// checkpoint runs the Checkpoint activity; a failure is a
// checkpoint_warning event and no id.
func (r *run) checkpoint(ctx workflow.Context, id string, in activities.CheckpointInput) string {
	in.SessionID, in.Workspace = r.in.SessionID, r.Workspace
	var res activities.CheckpointResult
	err := workflow.ExecuteActivity(r.checkpointOptions(ctx, id), activities.CheckpointName, in).Get(ctx, &res)
	if err != nil {
		res.Warning = "checkpoint not taken: " + rootMessage(err)
	}
	if res.Warning != "" {
		r.emit(ctx, agent.Event{Type: agent.EventCheckpointWarning, Reason: res.Warning})
	}
	return res.ID
}

// checkpointEvidence is what the workspace changed since the turn's
// checkpoint, for the result of a call whose outcome is unknown ("" when
// the turn has no checkpoint or the evidence cannot be read).
func (r *run) checkpointEvidence(ctx workflow.Context, c *toolCall) string {
	if r.checkpointID == "" {
		return ""
	}
	in := activities.CheckpointInput{SessionID: r.in.SessionID, Workspace: r.Workspace, Since: r.checkpointID}
	var res activities.CheckpointResult
	_ = workflow.ExecuteActivity(r.checkpointOptions(ctx, "evidence-"+c.resultID), activities.CheckpointName, in).Get(ctx, &res)
	return res.Evidence
}
