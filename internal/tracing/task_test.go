package tracing

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/internal/tools"
)

// taskInput stands for workflows.SubAgentInput.
type taskInput struct{ Call, Session string }

func (in taskInput) TaskCall() (string, string) { return in.Call, in.Session }

// runTraced runs wf, registered as name, with the tracing interceptor,
// and returns the ended spans.
func runTraced(t *testing.T, name string, wf any, arg any) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	ti, err := New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))).Interceptor()
	if err != nil {
		t.Fatal(err)
	}
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{ti}})
	env.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: name})
	env.ExecuteWorkflow(name, arg)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	return rec.Ended()
}

func noop(workflow.Context, taskInput) error { return nil }

// The span of the workflow that runs a task call is the call's: named
// execute_tool task, with the tool's GenAI attributes, the call id and
// the sub-agent's session.
func TestTaskCallSpan(t *testing.T) {
	spans := runTraced(t, tools.TaskWorkflow, noop, taskInput{Call: "call_1", Session: "s1.task-call_1-0a0b0c0d"})
	var task sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == "execute_tool task" {
			task = s
		}
	}
	if task == nil {
		t.Fatalf("no execute_tool task span among %d spans", len(spans))
	}
	a := attrs(task)
	for k, want := range map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "task",
		"tool.name": "task", "gen_ai.tool.call.id": "call_1", SubAgentSessionKey: "s1.task-call_1-0a0b0c0d"} {
		if got := a[attribute.Key(k)].AsString(); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

// Another workflow's span keeps its name and gets no tool attributes,
// whatever its input.
func TestOtherWorkflowSpanUnchanged(t *testing.T) {
	spans := runTraced(t, "Prompt", noop, taskInput{Call: "call_1", Session: "s1"})
	for _, s := range spans {
		if s.Name() == "execute_tool task" || attrs(s)["tool.name"].AsString() != "" {
			t.Errorf("span %q %v of a Prompt workflow", s.Name(), attrs(s))
		}
	}
	if len(spans) == 0 || spans[len(spans)-1].Name() != "RunWorkflow:Prompt" {
		t.Errorf("spans %d, want the RunWorkflow:Prompt span last", len(spans))
	}
}
