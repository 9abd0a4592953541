package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
)

// branchSummary is where the session's branch stands, for a session with
// a worktree (the WorktreeSummary activity, run as the prompt ends; its
// answer goes on prompt_end and into the result); nil for the others and
// when it cannot be read (the prompt
// ends all the same, and says so in the worker log). It runs on the
// session's host, where the worktree is, in a context an abort does not
// cancel: an aborted job's branch is the one a person wants to see.
func (r *run) branchSummary(ctx workflow.Context) *agent.BranchSummary {
	if !r.Worktree {
		return nil
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	actx := workflow.WithActivityOptions(dctx, placed(dctx, workflow.ActivityOptions{
		ActivityID:          "branch-" + r.PromptEntryID,
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         policy(time.Second, 3, activities.ErrTypeWorkspace),
		Summary:             "worktree summary",
	}, r.ToolHost, r.in.Tools.HostWaitMs))
	var sum *agent.BranchSummary
	if err := workflow.ExecuteActivity(actx, activities.WorktreeSummaryName, activities.WorktreeSummaryInput{SessionID: r.in.SessionID}).Get(dctx, &sum); err != nil {
		workflow.GetLogger(ctx).Warn("branch of the worktree not summarised", "session", r.in.SessionID, "error", err.Error())
		return nil
	}
	return sum
}
