package activities

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/durableagent/durableagent/internal/worktree"
)

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
	info, err := worktree.Create(ctx, ws, filepath.Join(a.WorktreeDir, sessionID), worktree.Branch(sessionID))
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
