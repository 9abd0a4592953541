package workflows

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/agent"
)

// EventsOfClosedRun answers the events query of a closed run from its
// history, in the calling process: the run's workflow code is replayed on
// the history (what a worker does to answer a closed workflow's query)
// and the function returned is its events query handler. A client reads
// an ended prompt's events this way with no worker (internal/control),
// however many there are. It fails when the history does not replay on
// this build's workflow code (a worker of another version wrote it): the
// caller then asks a worker. Nothing is logged (a starter's stdout may be
// RPC mode's). exec is the run (nil: the one the history names).
func EventsOfClosedRun(hist *historypb.History, exec *commonpb.WorkflowExecution, dc converter.DataConverter) (func(after int64) ([]agent.Event, error), error) {
	capture := &eventsCapture{}
	r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{
		DataConverter: dc,
		Interceptors:  []interceptor.WorkerInterceptor{capture},
	})
	if err != nil {
		return nil, fmt.Errorf("replay events: %w", err)
	}
	for name, fn := range map[string]any{
		PromptWorkflowName: Prompt, CompactWorkflowName: Compact, BashWorkflowName: Bash,
		DeleteSessionWorkflowName: DeleteSession, SessionWriteWorkflowName: SessionWrite,
		ScheduledPromptWorkflowName: ScheduledPrompt,
	} {
		r.RegisterWorkflowWithOptions(fn, workflow.RegisterOptions{Name: name})
	}
	quiet := sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))
	err = r.ReplayWorkflowHistoryWithOptions(quiet, hist, worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: exec.GetWorkflowId(), RunID: exec.GetRunId()},
	})
	if err != nil {
		return nil, fmt.Errorf("replay events of workflow %s run %s: %w", exec.GetWorkflowId(), exec.GetRunId(), err)
	}
	capture.mu.Lock()
	h := capture.handler
	capture.mu.Unlock()
	if h == nil {
		return nil, errors.New("replay events: the workflow has no events query")
	}
	return h, nil
}

// eventsCapture keeps the events query handler a replayed workflow sets.
type eventsCapture struct {
	interceptor.WorkerInterceptorBase
	mu      sync.Mutex
	handler func(after int64) ([]agent.Event, error)
}

func (c *eventsCapture) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	in := &captureInbound{c: c}
	in.Next = next
	return in
}

type captureInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	c *eventsCapture
}

func (i *captureInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	out := &captureOutbound{c: i.c}
	out.Next = outbound
	return i.Next.Init(out)
}

type captureOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	c *eventsCapture
}

func (o *captureOutbound) SetQueryHandler(ctx workflow.Context, queryType string, handler any) error {
	o.c.keep(queryType, handler)
	return o.Next.SetQueryHandler(ctx, queryType, handler)
}

func (o *captureOutbound) SetQueryHandlerWithOptions(ctx workflow.Context, queryType string, handler any, options workflow.QueryHandlerOptions) error {
	o.c.keep(queryType, handler)
	return o.Next.SetQueryHandlerWithOptions(ctx, queryType, handler, options)
}

// keep records handler when it is the events query's (of either form).
func (c *eventsCapture) keep(queryType string, handler any) {
	if queryType != agent.QueryEvents {
		return
	}
	var h func(after int64) ([]agent.Event, error)
	switch fn := handler.(type) {
	case func(eventsArg) ([]agent.Event, error):
		h = func(after int64) ([]agent.Event, error) { return fn(eventsArg{AfterSeq: after}) }
	case func(int64) ([]agent.Event, error):
		h = fn
	default:
		return
	}
	c.mu.Lock()
	c.handler = h
	c.mu.Unlock()
}
