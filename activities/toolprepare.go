package activities

import (
	"slices"

	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/tools"
)

// toolPreparer is implemented by a tools.Runner that can get ready for a
// workspace's commands ahead (sandbox.Runner starts spare sandboxes).
// Prepare must return at once: it is called as a model call starts.
type toolPreparer interface {
	Prepare(dir string, env []string)
}

// prepareTools hints the worker's runner, as a model call of sess starts,
// that the answer's bash calls may follow, in the session's workspace
// with the environment RunTool gives them (toolOptions): a sandbox
// runner fills the workspace's pool of spares during the model's turn.
// No hint when the model is offered no bash, when the session's tools run
// on another host, or when the workspace is not one this worker would
// run a tool in (checkWorkspace).
func (a *Activities) prepareTools(sess *session.Session, offered []string) {
	p, ok := a.ToolPolicy.Runner.(toolPreparer)
	hdr := sess.Header
	if !ok || !slices.Contains(offered, tools.Bash) ||
		(hdr.Host != "" && a.ToolHost != "" && hdr.Host != a.ToolHost) || a.checkWorkspace(hdr.Cwd) != nil {
		return
	}
	p.Prepare(hdr.Cwd, a.bashEnv())
}
