package client

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/workflows"
)

// Place sets in.Host, the tool host of the prompt's session, before the
// prompt starts: the one placement of starter prompt, chat, rpc and
// schedule create (docs/cluster.md). h and readErr are the session's
// header as read through the workers (readErr session.ErrNotFound: a new
// session). A new session goes to named (--host), else to dflt
// (session.host), else to a host that has its workspace; a host without
// it is refused in one line. An existing session keeps its host: named
// naming another is refused, naming its own checks the workspace there.
func (k *Controller) Place(ctx context.Context, in *workflows.PromptInput, named, dflt string, h session.Header, readErr error) error {
	id := cmp.Or(in.SessionID, h.ID)
	switch {
	case errors.Is(readErr, session.ErrNotFound): // new: placed below
	case errors.Is(readErr, ErrNoWorker) && named == "":
		return nil // no worker to ask: the session's own host decides
	case errors.Is(readErr, ErrNoWorker): // the named host is asked below
	case readErr != nil:
		return fmt.Errorf("session %s: %w", id, readErr)
	case named == "":
		return nil
	case h.Host != named:
		return fmt.Errorf("session %s is on tool host %q, not %s: a session keeps the host it was created on (leave out --host)", id, h.Host, named)
	default:
		_, err := k.placeHost(ctx, named, h.Cwd)
		return err
	}
	host, err := k.placeHost(ctx, cmp.Or(named, dflt), in.Workspace)
	in.Host = host
	return err
}

// placeHost is the tool host a new session working in dir is created on:
// host when given, refused in one line naming it when its workers lack
// dir; else the first host, by name, whose workers have dir. "" when no
// host is given and fewer than two poll the task queue (one machine, or
// tools.placement any) or none of them answers: the session goes to the
// worker that begins its prompt.
func (k *Controller) placeHost(ctx context.Context, host, dir string) (string, error) {
	hosts := []string{host}
	if host == "" {
		resp, err := k.Client.DescribeTaskQueue(ctx, k.TaskQueue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		if err != nil {
			return "", fmt.Errorf("list the tool hosts of task queue %s: %w", k.TaskQueue, err)
		}
		hosts = nil
		for _, p := range resp.GetPollers() {
			// A live worker polls again within a minute; Temporal lists a
			// gone one for minutes.
			_, h, _ := strings.Cut(p.GetIdentity(), activities.HostMark)
			if h != "" && !slices.Contains(hosts, h) && time.Since(p.GetLastAccessTime().AsTime()) < 90*time.Second {
				hosts = append(hosts, h)
			}
		}
		if len(hosts) < 2 {
			return "", nil
		}
		slices.Sort(hosts)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second) // no worker to run the check: refused, not waited for
	defer cancel()
	run, err := k.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "probe-hosts-" + rand.Text(),
		TaskQueue: k.TaskQueue, WorkflowExecutionTimeout: 30 * time.Second},
		workflows.ProbeHostsWorkflowName, workflows.ProbeHostsInput{Hosts: hosts, Workspace: dir})
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
