package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
)

// ProbeHostsWorkflowName is the workflow a starter runs to learn which
// tool hosts have a new session's workspace.
const ProbeHostsWorkflowName = "ProbeHosts"

// HostProbeWait is how long a host's workers have to take the check.
const HostProbeWait = 5 * time.Second

// ProbeHostsInput names the hosts and the workspace to check.
type ProbeHostsInput struct {
	Hosts     []string `json:"hosts"`
	Workspace string   `json:"workspace"`
}

// HostProbe is one host's answer: Problem is "" when it has the
// workspace, else why not, in one line; NoWorker: none took the check.
type HostProbe struct {
	Host     string `json:"host"`
	Problem  string `json:"problem,omitempty"`
	NoWorker bool   `json:"noWorker,omitempty"`
}

// ProbeHosts checks the workspace on every host's tool queue at once.
func ProbeHosts(ctx workflow.Context, in ProbeHostsInput) ([]HostProbe, error) {
	tq := workflow.GetInfo(ctx).TaskQueueName
	fs := make([]workflow.Future, len(in.Hosts))
	for i, h := range in.Hosts {
		fs[i] = workflow.ExecuteActivity(placed(ctx, workflow.ActivityOptions{StartToCloseTimeout: 30 * time.Second,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}}, h, HostProbeWait.Milliseconds(), 0), activities.CheckWorkspaceName, in.Workspace)
	}
	out := make([]HostProbe, len(in.Hosts))
	for i, f := range fs {
		out[i].Host = in.Hosts[i]
		if err := f.Get(ctx, nil); temporal.IsTimeoutError(err) {
			out[i].NoWorker, out[i].Problem = true, fmt.Sprintf("no worker took the check from %s within %s",
				activities.ToolQueue(tq, in.Hosts[i]), HostProbeWait)
		} else if err != nil {
			out[i].Problem = rootMessage(err)
		}
	}
	return out, nil
}
