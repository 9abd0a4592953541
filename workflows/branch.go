package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
)

// branchSummary is where a worktree session's branch stands as the prompt
// ends (the WorktreeSummary activity on the session's host), nil for other
// sessions and when it cannot be read. An abort does not cancel it: an
// aborted job's branch is the one a person wants to see.
func (r *run) branchSummary(ctx workflow.Context) *agent.BranchSummary {
	if !r.Worktree {
		return nil
	}
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	actx := placed(dctx, workflow.ActivityOptions{
		ActivityID:          "branch-" + r.PromptEntryID,
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         policy(time.Second, 3, activities.ErrTypeWorkspace),
		Summary:             "worktree summary",
	}, r.ToolHost, r.in.Tools.HostWaitMs, 0)
	var sum *agent.BranchSummary
	if err := workflow.ExecuteActivity(actx, activities.WorktreeSummaryName, activities.WorktreeSummaryInput{SessionID: r.in.SessionID}).Get(dctx, &sum); err != nil {
		workflow.GetLogger(ctx).Warn("branch of the worktree not summarised", "session", r.in.SessionID, "error", err.Error())
		return nil
	}
	return sum
}
