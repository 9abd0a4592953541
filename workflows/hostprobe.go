package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
)

// ProbeHostsWorkflowName is the workflow a starter runs to learn which
// tool hosts have a workspace before it starts a new session there.
const ProbeHostsWorkflowName = "ProbeHosts"

// HostProbeWait is how long a host's workers have to take the check: a
// host that has none polling its queue is reported, not waited for.
const HostProbeWait = 5 * time.Second

// ProbeHostsInput names the hosts and the workspace to check.
type ProbeHostsInput struct {
	Hosts     []string `json:"hosts"`
	Workspace string   `json:"workspace"`
}

// HostProbe is one host's answer: Problem is "" when the host has the
// workspace, else why not, in one line. NoWorker: no worker of the host
// took the check (a host gone, or one that never was).
type HostProbe struct {
	Host     string `json:"host"`
	Problem  string `json:"problem,omitempty"`
	NoWorker bool   `json:"noWorker,omitempty"`
}

// ProbeHosts checks the workspace on each host's tool queue at once.
func ProbeHosts(ctx workflow.Context, in ProbeHostsInput) ([]HostProbe, error) {
	tq := workflow.GetInfo(ctx).TaskQueueName
	fs := make([]workflow.Future, len(in.Hosts))
	for i, h := range in.Hosts {
		hctx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue: activities.ToolQueue(tq, h), ScheduleToStartTimeout: HostProbeWait,
			StartToCloseTimeout: 30 * time.Second, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
		fs[i] = workflow.ExecuteActivity(hctx, activities.CheckWorkspaceName, in.Workspace)
	}
	out := make([]HostProbe, len(in.Hosts))
	for i, f := range fs {
		out[i].Host = in.Hosts[i]
		if err := f.Get(ctx, nil); temporal.IsTimeoutError(err) {
			out[i].NoWorker = true
			out[i].Problem = fmt.Sprintf("no worker took the check from %s within %s (is one running with tools.host %s?)",
				activities.ToolQueue(tq, in.Hosts[i]), HostProbeWait, in.Hosts[i])
		} else if err != nil {
			out[i].Problem = rootMessage(err)
		}
	}
	return out, nil
}
