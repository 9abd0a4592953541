package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/worktree"
)

// DeleteSessionName is the registered name of DeleteSession.
const DeleteSessionName = "DeleteSession"

// DeleteSessionInput is the input of DeleteSession.
type DeleteSessionInput struct {
	SessionID string `json:"sessionId"`
	// Workspace is the session's workspace (from its header; "" for a
	// session without one).
	Workspace string `json:"workspace,omitempty"`
	// Force deletes a worktree session whose worktree has uncommitted
	// changes or whose branch has commits no other branch has.
	Force bool `json:"force,omitempty"`
}

// DeleteSessionResult says what DeleteSession removed.
type DeleteSessionResult struct {
	// OutputsDir is the directory of the session's full bash outputs
	// that was removed ("" when there was none).
	OutputsDir string `json:"outputsDir,omitempty"`
	// Worktree is the session's git worktree that was removed ("" when it
	// had none), Branch its branch, deleted with it, Repo its repository.
	// Unmerged counts the commits of the branch that no other branch had
	// (a forced delete), Tip the commit it pointed at: git branch Branch
	// Tip in Repo brings it back.
	Worktree string `json:"worktree,omitempty"`
	Branch   string `json:"branch,omitempty"`
	Repo     string `json:"repo,omitempty"`
	Unmerged int    `json:"unmerged,omitempty"`
	Tip      string `json:"tip,omitempty"`
}

// DeleteSession removes a session from the worker (docs/spec.md
// 14.2a.8): first its git worktree if it has one (worktree.Git.Remove:
// with its branch; refused without in.Force when that loses work), then
// the full outputs of its truncated bash calls (removeSessionOutputs),
// its workspace checkpoints, then the session itself from the store. Each step is idempotent, so a
// retry after a crash finishes the job. The caller makes sure nothing
// runs in the session (the DeleteSession workflow runs under the
// session's workflow id).
func (a *Activities) DeleteSession(ctx context.Context, in DeleteSessionInput) (DeleteSessionResult, error) {
	if err := session.ValidateID(in.SessionID); err != nil {
		return DeleteSessionResult{}, badInput(err)
	}
	var res DeleteSessionResult
	// The worktree first: its header is the record of it, so a retry
	// after a crash finds it again (removing is idempotent).
	if sess, err := a.Sessions.Load(in.SessionID); err == nil && sess.Header.Worktree != nil {
		wt := sess.Header.Worktree
		rm, err := a.worktreeGit().Remove(ctx, wt.Repo, wt.Dir, wt.Branch, in.Force)
		if errors.Is(err, worktree.ErrUnsaved) {
			return DeleteSessionResult{}, workspaceError("%v", err)
		}
		if err != nil {
			return DeleteSessionResult{}, fmt.Errorf("delete session %s: %w", in.SessionID, err)
		}
		res.Worktree, res.Branch, res.Repo, res.Unmerged, res.Tip = wt.Dir, wt.Branch, wt.Repo, rm.Unmerged, rm.Tip
	}
	var err error
	if in.Workspace != "" && filepath.IsAbs(in.Workspace) {
		res.OutputsDir, err = removeSessionOutputs(in.Workspace, in.SessionID)
	}
	if err == nil && a.Checkpoints.DataDir != "" {
		err = os.RemoveAll(CheckpointDir(a.Checkpoints.DataDir, in.SessionID))
	}
	if err != nil {
		return DeleteSessionResult{}, fmt.Errorf("delete session %s: %w", in.SessionID, err)
	}
	if err := a.Sessions.Delete(in.SessionID); err != nil {
		return DeleteSessionResult{}, storeError("delete session", err)
	}
	return res, nil
}

// removeSessionOutputs removes the session's full-output directory under
// workspace, through the workspace's os.Root, and returns it ("" when there
// was none to remove). What a command planted in its place (a file, a
// FIFO, a link, a parent that is a link out of the workspace) is left.
func removeSessionOutputs(workspace, sessionID string) (string, error) {
	root, err := os.OpenRoot(workspace)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("remove bash outputs: %w", err)
	}
	defer root.Close()
	rel := sessionOutputs(sessionID)
	if fi, err := root.Lstat(rel); err != nil || !fi.IsDir() {
		return "", nil // none, or not ours
	}
	if err := root.RemoveAll(rel); err != nil {
		return "", fmt.Errorf("remove bash outputs %s: %w", rel, err)
	}
	return filepath.Join(workspace, rel), nil
}
