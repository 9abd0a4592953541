package activities

import (
	"context"
	"strings"
)

// CheckWorkspaceName is the activity that checks a workspace on one tool
// host (workflows.ProbeHosts, on ToolQueue(taskQueue, host)).
const CheckWorkspaceName = "CheckWorkspace"

// CheckWorkspace refuses a workspace that this worker's host lacks (or
// that its policy refuses), as BeginPrompt would: how a starter learns,
// before a prompt starts, which host a new session can work on.
func (a *Activities) CheckWorkspace(_ context.Context, dir string) error {
	return a.checkWorkspace(dir)
}

// hostMark ends a worker's identity with its tool host (HostIdentity), so
// that the pollers of the shared task queue name the hosts.
const hostMark = " tools.host="

// HostIdentity is the Temporal identity of a worker of tool host host.
func HostIdentity(id, host string) string { return id + hostMark + host }

// IdentityHost is the tool host of a worker identity ("": none, the
// worker places tools anywhere).
func IdentityHost(id string) string {
	_, h, _ := strings.Cut(id, hostMark)
	return h
}
