package integration

import (
	"context"
	"fmt"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.temporal.io/sdk/interceptor"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/tracing"
)

// Issue 26 (traces) on the real server: with the SDK's tracing
// interceptor, a prompt with a retried 503 and a tool call is one trace:
// the workflow's span, its activities' spans, a GenAI span per model
// call (the failed one with its error type and attempt) and a span for
// the tool call.
func TestIntegration_TracesOfAPrompt(t *testing.T) {
	e := newEnv(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ti, err := tracing.New(tp).Interceptor()
	if err != nil {
		t.Fatal(err)
	}
	e.ext.Interceptors = []interceptor.WorkerInterceptor{ti}
	e.startWorker()
	in := client.PromptInput(e.s, "traces", "write a note")
	in.Workspace = t.TempDir()
	in.Model.Faults = []string{e503, `tool:write {"path":"note.txt","content":"hi"}`, `text:done`}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("result %+v %v", res, err)
	}
	e.stopWorker()

	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	wf := byName["RunWorkflow:Prompt"]
	if len(wf) == 0 {
		t.Fatalf("no workflow span; spans: %v", names(byName))
	}
	trace := wf[0].SpanContext().TraceID()
	chats := byName["chat "+in.Model.Name]
	if len(chats) != 3 {
		t.Fatalf("%d model call spans, want 3 (a 503, a tool call, the answer); spans: %v", len(chats), names(byName))
	}
	var failed int
	for _, s := range chats {
		if s.SpanContext().TraceID() != trace {
			t.Errorf("model call span in trace %s, the workflow's is %s", s.SpanContext().TraceID(), trace)
		}
		a := map[string]string{}
		for _, kv := range s.Attributes() {
			a[string(kv.Key)] = kv.Value.String()
		}
		if a["gen_ai.system"] != "scripted" || a["gen_ai.request.model"] != in.Model.Name {
			t.Errorf("model call attributes %v", a)
		}
		if a["error.type"] != "" {
			failed++
			if a["error.type"] != "retryable" {
				t.Errorf("failed call attributes %v", a)
			}
		}
	}
	if failed != 1 {
		t.Errorf("%d failed model call spans, want 1", failed)
	}
	tool := byName["execute_tool write"]
	if len(tool) != 1 || tool[0].SpanContext().TraceID() != trace {
		t.Errorf("tool spans %v in the workflow's trace: %d", names(byName), len(tool))
	}
}

func names(m map[string][]sdktrace.ReadOnlySpan) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s×%d", k, len(v)))
	}
	return out
}
