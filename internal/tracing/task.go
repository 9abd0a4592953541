package tracing

import (
	"go.opentelemetry.io/otel/attribute"
	tmotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/internal/tools"
)

// A task tool call (a sub-agent, issue 25) is no activity: it runs the
// sub-agent's Prompt workflow as a child of the calling prompt. The SDK's
// interceptor carries the trace context across child starts, so a
// sub-agent's spans are in the trace of the prompt that called it, under
// the span of the sub-agent's prompt's first run. That span is the task
// call's: taskInbound names it "execute_tool task" and gives it the tool
// attributes, the call id and the sub-agent's session (an id: an
// attribute of a span, never a metric label).

// SubAgentPrompt is the input of a prompt (workflows.PromptInput): the
// task call it runs for, when it is a sub-agent's prompt's first run
// started by the calling prompt itself (parentWorkflowID its parent's
// workflow id); "" otherwise.
type SubAgentPrompt interface {
	SubAgentCall(parentWorkflowID string) (toolCallID, subAgentSession string)
}

// SubAgentSessionKey is the task span's attribute naming the sub-agent's
// session (`starter events --session` follows it).
const SubAgentSessionKey = "durableagent.subagent.session"

// withTaskSpans is the SDK's tracing interceptor with taskInbound inside
// its workflow interceptor, where the workflow's span is in the context.
type withTaskSpans struct {
	interceptor.Interceptor
}

func (w withTaskSpans) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	next = &taskInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}}
	return w.Interceptor.InterceptWorkflow(ctx, next)
}

// taskInbound makes the span of a task call's workflow (a sub-agent's
// prompt started by its caller) the call's span.
type taskInbound struct {
	interceptor.WorkflowInboundInterceptorBase
}

func (t *taskInbound) ExecuteWorkflow(ctx workflow.Context, in *interceptor.ExecuteWorkflowInput) (any, error) {
	info := workflow.GetInfo(ctx)
	var id, session string
	if len(in.Args) == 1 {
		if call, ok := in.Args[0].(SubAgentPrompt); ok && info.ParentWorkflowExecution != nil {
			id, session = call.SubAgentCall(info.ParentWorkflowExecution.ID)
		}
	}
	if span, ok := tmotel.SpanFromWorkflowContext(ctx); ok && id != "" {
		span.SetName("execute_tool " + tools.Task)
		span.SetAttributes(toolAttrs(tools.Task)...)
		span.SetAttributes(attribute.String("gen_ai.tool.call.id", id), attribute.String(SubAgentSessionKey, session))
	}
	return t.Next.ExecuteWorkflow(ctx, in)
}

// toolAttrs are the GenAI attributes of a tool call's span.
func toolAttrs(name string) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", name),
		attribute.String("tool.name", name),
	}
}
