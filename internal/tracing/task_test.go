package tracing

import (
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

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

func noop(workflow.Context, subPromptInput) error { return nil }

// A workflow without a parent keeps its span's name and gets no tool
// attributes, whatever its input.
func TestOtherWorkflowSpanUnchanged(t *testing.T) {
	spans := runTraced(t, "Prompt", noop, subPromptInput{Call: "call_1", Session: "s1"})
	for _, s := range spans {
		if s.Name() == "execute_tool task" || attrs(s)["tool.name"].AsString() != "" {
			t.Errorf("span %q %v of a Prompt workflow", s.Name(), attrs(s))
		}
	}
	if len(spans) == 0 || spans[len(spans)-1].Name() != "RunWorkflow:Prompt" {
		t.Errorf("spans %d, want the RunWorkflow:Prompt span last", len(spans))
	}
}

// subPromptInput stands for a sub-agent's workflows.PromptInput: its call
// is the one of the prompt whose workflow id is Caller.
type subPromptInput struct{ Caller, Call, Session string }

func (in subPromptInput) SubAgentCall(parent string) (string, string) {
	if parent != in.Caller {
		return "", ""
	}
	return in.Call, in.Session
}

// The span of a sub-agent's prompt started by its caller's prompt is the
// task call's: named execute_tool task, with the tool's GenAI attributes,
// the call id and the sub-agent's session; a prompt started by another
// workflow keeps its own.
func TestSubAgentPromptSpan(t *testing.T) {
	for _, tc := range []struct {
		name, caller string
		want         bool
	}{
		{"started by the caller", "default-test-workflow-id", true},
		{"started by another workflow", "session-someone-else", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := subPromptInput{Caller: tc.caller, Call: "call_2", Session: "s1.task-call_2-0a0b0c0d"}
			caller := func(ctx workflow.Context) error {
				ctx = workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: "session-" + in.Session})
				return workflow.ExecuteChildWorkflow(ctx, "Prompt", in).Get(ctx, nil)
			}
			rec := tracetest.NewSpanRecorder()
			ti, err := New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))).Interceptor()
			if err != nil {
				t.Fatal(err)
			}
			var s testsuite.WorkflowTestSuite
			env := s.NewTestWorkflowEnvironment()
			env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{ti}})
			env.RegisterWorkflowWithOptions(caller, workflow.RegisterOptions{Name: "Caller"})
			env.RegisterWorkflowWithOptions(func(workflow.Context, subPromptInput) error { return nil }, workflow.RegisterOptions{Name: "Prompt"})
			env.ExecuteWorkflow("Caller")
			if err := env.GetWorkflowError(); err != nil {
				t.Fatal(err)
			}
			var task sdktrace.ReadOnlySpan
			for _, s := range rec.Ended() {
				if s.Name() == "execute_tool task" {
					task = s
				}
			}
			if (task != nil) != tc.want {
				t.Fatalf("execute_tool task span %v, want one: %v", task != nil, tc.want)
			}
			if task == nil {
				return
			}
			if a := attrs(task); a["gen_ai.tool.call.id"].AsString() != "call_2" || a[SubAgentSessionKey].AsString() != in.Session ||
				a["gen_ai.operation.name"].AsString() != "execute_tool" || a["gen_ai.tool.name"].AsString() != "task" || a["tool.name"].AsString() != "task" {
				t.Errorf("task span attributes %v", a)
			}
		})
	}
}
