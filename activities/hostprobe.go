package activities

import "context"

// CheckWorkspaceName is the activity that checks a workspace on one tool
// host (workflows.ProbeHosts, on ToolQueue(taskQueue, host)).
const CheckWorkspaceName = "CheckWorkspace"

// HostMark and the host's name end the Temporal identity of a worker of a
// tool host, so that the pollers of the shared queue name the hosts.
const HostMark = " tools.host="

// CheckWorkspace refuses a workspace this worker's host lacks, as a
// prompt's start would: how a starter learns, before a new session
// starts, which host can hold it.
func (a *Activities) CheckWorkspace(_ context.Context, dir string) error {
	return a.checkWorkspace(dir)
}
