package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/durableagent/durableagent/internal/settings"
)

// workspaceFlags are --workspace and --continue of prompt and chat.
type workspaceFlags struct {
	workspace string
	cont      bool
}

func (c *common) addWorkspaceFlags() *workspaceFlags {
	w := &workspaceFlags{}
	c.fs.StringVar(&w.workspace, "workspace", "", "the directory a new session's tools work in (default: the current directory; a session keeps the workspace it was created with)")
	c.fs.BoolVarP(&w.cont, "continue", "c", false, "continue the most recent session whose workspace is this directory (or --workspace)")
	return w
}

// resolve makes the workspace absolute (the current directory when not
// given) and, with --continue, sets c.session to the most recent session
// in it.
func (w *workspaceFlags) resolve(c *common, s settings.Settings) error {
	if w.workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("current directory: %w (use --workspace DIR)", err)
		}
		w.workspace = wd
	} else if abs, err := filepath.Abs(w.workspace); err == nil {
		w.workspace = abs
	}
	if !w.cont {
		return nil
	}
	if c.fs.Changed("session") {
		return errors.New("give --continue or --session, not both")
	}
	id, err := latestSessionIn(s, w.workspace)
	if err != nil {
		return err
	}
	c.session = id
	return nil
}

// latestSessionIn is the session with the most recent activity whose
// workspace is dir, or that was started in dir with a worktree (its
// workspace is the worktree; the user stays in the repository).
func latestSessionIn(s settings.Settings, dir string) (string, error) {
	sums, err := summarize(s, "")
	if err != nil {
		return "", fmt.Errorf("--continue: %w", err)
	}
	for _, sum := range sums { // newest first
		if sum.Workspace != "" && filepath.Clean(sum.Workspace) == dir || sum.from != "" && filepath.Clean(sum.from) == dir {
			return sum.ID, nil
		}
	}
	return "", fmt.Errorf("--continue: no session in %s to continue (start one with starter prompt MESSAGE; starter sessions lists them)", dir)
}
