package workflows

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"

	"github.com/durableagent/durableagent/activities"
)

// ProbeHosts asks every host's tool queue for the workspace and gives
// each host's answer: none for a host that has it, the check's own error
// for one that does not.
func TestProbeHosts_GivesEachHostsAnswer(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	var queues []string
	env.RegisterActivityWithOptions(func(ctx context.Context, dir string) error {
		queues = append(queues, activity.GetInfo(ctx).TaskQueue)
		if strings.HasSuffix(activity.GetInfo(ctx).TaskQueue, "@b") || dir != "/w" {
			return errors.New("workspace /w is not a directory on this host")
		}
		return nil
	}, activity.RegisterOptions{Name: activities.CheckWorkspaceName})
	env.ExecuteWorkflow(ProbeHosts, ProbeHostsInput{Hosts: []string{"a", "b"}, Workspace: "/w"})
	var out []HostProbe
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || out[0] != (HostProbe{Host: "a"}) ||
		out[1] != (HostProbe{Host: "b", Problem: "workspace /w is not a directory on this host"}) {
		t.Fatalf("probes %+v (queues %v)", out, queues)
	}
}
