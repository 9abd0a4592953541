package activities

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/worktree"
)

// WorktreeSummaryName is the registered name of WorktreeSummary.
const WorktreeSummaryName = "WorktreeSummary"

// maxBranchText bounds BranchSummary.Text, in runes (line.Cut).
const maxBranchText = 300

// WorktreeSummaryInput names the session whose branch to describe.
type WorktreeSummaryInput struct {
	SessionID string `json:"sessionId"`
}

// WorktreeSummary says where the branch of a --worktree session stands
// against its base (its commits, its uncommitted files), bounded to
// agent.MaxRecentCommits commits, for the end of a prompt. It runs where
// the worktree is (a tool activity: the session's host). A session
// without a worktree gets nil.
func (a *Activities) WorktreeSummary(ctx context.Context, in WorktreeSummaryInput) (*agent.BranchSummary, error) {
	sess, err := a.load(in.SessionID)
	if err != nil {
		return nil, err
	}
	wt := sess.Header.Worktree
	if wt == nil {
		return nil, nil
	}
	sum, err := a.worktreeGit().Summarize(ctx, wt.Dir, wt.Branch, wt.Base)
	if err != nil {
		return nil, workspaceError("%v", err)
	}
	// Commit subjects are the agent's words, as tool output is: redacted
	// of the worker's secrets before they reach history.
	red := a.outputRedactor(ctx)
	out := &agent.BranchSummary{Branch: sum.Branch, Base: sum.Base, Commits: len(sum.Commits),
		Uncommitted: sum.Uncommitted, Text: line.Cut(red.known(sum.String()), maxBranchText)}
	for _, c := range sum.Commits[:min(len(sum.Commits), agent.MaxRecentCommits)] {
		out.Recent = append(out.Recent, red.known(c))
	}
	for _, f := range sum.Files[:min(len(sum.Files), agent.MaxBranchFiles)] {
		out.Files = append(out.Files, red.known(f))
	}
	out.FilesMore = len(sum.Files) - len(out.Files)
	return out, nil
}

// makeWorktree makes the git worktree of a new session (BeginPrompt) at
// <WorktreeDir>/<session> on branch agent/<session>, from the repository
// of ws, which must itself be a workspace the worker allows.
func (a *Activities) makeWorktree(ctx context.Context, sessionID, ws string) (worktree.Info, error) {
	if a.WorktreeDir == "" {
		return worktree.Info{}, workspaceError("this worker keeps no worktrees (no data directory): start session %s without --worktree", sessionID)
	}
	if ws == "" {
		return worktree.Info{}, workspaceError("--worktree needs a workspace (starter prompt --workspace DIR)")
	}
	if err := a.checkWorkspace(ws); err != nil {
		return worktree.Info{}, err
	}
	info, err := a.worktreeGit().Create(ctx, ws, filepath.Join(a.WorktreeDir, sessionID), worktree.Branch(sessionID))
	if err != nil {
		if errors.Is(err, worktree.ErrNotRepo) || ctx.Err() == nil {
			// Not a repository, no commit, a branch in the way: the
			// user's to fix, so a retry would not help.
			return worktree.Info{}, workspaceError("%v", err)
		}
		return worktree.Info{}, err
	}
	return info, nil
}

// worktreeGit runs the git of sessions' worktrees where their bash calls
// run (the worker's sandbox), with their environment.
func (a *Activities) worktreeGit() worktree.Git {
	return worktree.Git{Runner: a.ToolPolicy.Runner, Env: a.bashEnv()}
}
