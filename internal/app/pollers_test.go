package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"

	"github.com/durableagent/durableagent/internal/devserver"
	"github.com/durableagent/durableagent/internal/testserver"
)

// staleStickyHint makes every workflow task the worker polls from its
// sticky queue report a backlog of one: the stale hint a burst of
// prompts leaves behind (the SDK's own comment: "a stale hint can move
// every poll to sticky").
func staleStickyHint(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if p, ok := req.(*workflowservice.PollWorkflowTaskQueueRequest); ok && err == nil &&
		p.GetTaskQueue().GetKind() == enumspb.TASK_QUEUE_KIND_STICKY {
		if r, ok := reply.(*workflowservice.PollWorkflowTaskQueueResponse); ok && len(r.GetTaskToken()) > 0 {
			r.BacklogCountHint = 1
		}
	}
	return err
}

func pollersWaitWorkflow(ctx workflow.Context) error {
	workflow.GetSignalChannel(ctx, "go").Receive(ctx, nil)
	return nil
}

func pollersDoneWorkflow(workflow.Context) error { return nil }

// A worker whose last sticky response reported a backlog still takes a
// new prompt's first workflow task (on the normal queue) at once. With
// the SDK's default pollers (two "mixed" ones, each poll to the sticky
// queue while that hint says so) every poller ends up in a long poll on
// the idle sticky queue, and a new workflow waited seconds for the
// server to hand its task over (issue 26: all 16 followers of a fanout
// round reported "no worker is answering" at once).
func TestWorkerOptions_NewWorkflowStartsAtOnceAfterAStaleStickyHint(t *testing.T) {
	s := testserver.Settings(t, "pollers")
	c, err := client.Dial(client.Options{
		HostPort: s.Temporal.Address, Namespace: devserver.DefaultNamespace,
		Logger:            sdklog.NewStructuredLogger(testserver.Quiet()),
		ConnectionOptions: client.ConnectionOptions{DialOptions: []grpc.DialOption{grpc.WithChainUnaryInterceptor(staleStickyHint)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	queue := s.Temporal.TaskQueue
	w := worker.New(c, queue, WorkerOptions(s))
	w.RegisterWorkflowWithOptions(pollersWaitWorkflow, workflow.RegisterOptions{Name: "PollersWait"})
	w.RegisterWorkflowWithOptions(pollersDoneWorkflow, workflow.RegisterOptions{Name: "PollersDone"})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := func(id, name string) client.WorkflowRun {
		t.Helper()
		r, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: queue}, name)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	const limit = 3 * time.Second
	for i := range 3 {
		// A workflow task on the sticky queue (the hint), then one on
		// the normal queue (a poller there takes it and polls again).
		waiting := run(fmt.Sprintf("%s-wait-%d", queue, i), "PollersWait")
		testserver.WaitFor(t, 30*time.Second, "the waiting workflow's first task", func() bool {
			d, err := c.DescribeWorkflowExecution(ctx, waiting.GetID(), "")
			return err == nil && d.GetWorkflowExecutionInfo().GetHistoryLength() >= 4 // started, scheduled, started, completed
		})
		if err := c.SignalWorkflow(ctx, waiting.GetID(), "", "go", nil); err != nil {
			t.Fatal(err)
		}
		if err := waiting.Get(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if err := run(fmt.Sprintf("%s-first-%d", queue, i), "PollersDone").Get(ctx, nil); err != nil {
			t.Fatal(err)
		}
		// A new workflow now: its first task is on the normal queue.
		start := time.Now()
		if err := run(fmt.Sprintf("%s-new-%d", queue, i), "PollersDone").Get(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > limit {
			t.Fatalf("round %d: a new workflow took %v to complete its first workflow task after a stale sticky hint (limit %v): no poller was on the normal queue", i, d.Round(time.Millisecond), limit)
		}
	}
}
