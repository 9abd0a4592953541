package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/workflows"
)

// hostCheckTimeout bounds the ProbeHosts workflow: a cluster with no
// worker to run it refuses the prompt rather than wait.
const hostCheckTimeout = 30 * time.Second

// PlaceSession is the tool host a new session working in dir is created
// on (docs/cluster.md): host when given, refused in one line naming it
// when its workers lack dir; else the first host, by name, whose workers
// have dir. "" when no host is given and at most one polls the task
// queue (one machine, or tools.placement any) or none of them answers
// (the pollers Temporal lists include workers gone in the last minutes):
// the session goes to the worker that begins its prompt, as it always
// did.
func (k *Controller) PlaceSession(ctx context.Context, host, dir string) (string, error) {
	hosts := []string{host}
	if host == "" {
		resp, err := k.Client.DescribeTaskQueue(ctx, k.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		if err != nil {
			return "", fmt.Errorf("list the tool hosts of task queue %s: %w", k.TaskQueue, err)
		}
		hosts = nil
		for _, p := range resp.GetPollers() {
			// A live worker polls again within a long poll (a minute);
			// Temporal lists a gone one for minutes.
			if time.Since(p.GetLastAccessTime().AsTime()) > 90*time.Second {
				continue
			}
			if h := activities.IdentityHost(p.GetIdentity()); h != "" && !slices.Contains(hosts, h) {
				hosts = append(hosts, h)
			}
		}
		if len(hosts) < 2 {
			return "", nil
		}
		slices.Sort(hosts)
	}
	id := make([]byte, 6)
	_, _ = rand.Read(id)
	ctx, cancel := context.WithTimeout(ctx, hostCheckTimeout)
	defer cancel()
	in := workflows.ProbeHostsInput{Hosts: hosts, Workspace: dir}
	run, err := k.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "probe-hosts-" + hex.EncodeToString(id),
		TaskQueue: k.TaskQueue, WorkflowExecutionTimeout: hostCheckTimeout}, workflows.ProbeHostsWorkflowName, in)
	var probes []workflows.HostProbe
	if err == nil {
		err = run.Get(ctx, &probes)
	}
	if err != nil {
		return "", fmt.Errorf("check the tool hosts %s for workspace %s: %w", strings.Join(hosts, ", "), dir, err)
	}
	var why []string
	gone := 0
	for _, p := range probes {
		if p.Problem == "" {
			return p.Host, nil
		}
		why = append(why, "tool host "+p.Host+": "+p.Problem)
		if p.NoWorker {
			gone++
		}
	}
	switch {
	case host != "":
		return "", fmt.Errorf("%s", why[0])
	case gone == len(probes):
		return "", nil
	}
	return "", fmt.Errorf("no tool host has workspace %s (%s)", dir, strings.Join(why, "; "))
}
