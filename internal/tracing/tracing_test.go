package tracing

import (
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/tools"
)

// underParent runs f in the context of a parent span (the activity's)
// and returns the spans that ended, the parent last.
func underParent(t *testing.T, f func(ctx context.Context)) []sdktrace.ReadOnlySpan {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ctx, parent := tp.Tracer("test").Start(context.Background(), "RunActivity:CallModel")
	f(ctx)
	parent.End()
	return rec.Ended()
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// A model call is a child span of the activity's with the GenAI
// attributes, and no answer text by default.
func TestModelCallSpan(t *testing.T) {
	spans := underParent(t, func(ctx context.Context) {
		ModelCall(ctx, "anthropic", "claude-x", 2, agent.Message{StopReason: agent.StopReasonStop,
			Content: []agent.ContentBlock{{Type: "text", Text: "the secret plan"}},
			Usage:   &agent.Usage{Input: 120, Output: 30}})
	})
	if len(spans) != 2 {
		t.Fatalf("%d spans", len(spans))
	}
	s, parent := spans[0], spans[1]
	if s.Name() != "chat claude-x" || s.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Fatalf("span %q parent %v, want chat claude-x under the activity's", s.Name(), s.Parent().SpanID())
	}
	a := attrs(s)
	for k, want := range map[attribute.Key]string{"gen_ai.system": "anthropic", "gen_ai.request.model": "claude-x", "gen_ai.operation.name": "chat"} {
		if a[k].AsString() != want {
			t.Errorf("%s = %q, want %q", k, a[k].AsString(), want)
		}
	}
	if a["gen_ai.usage.input_tokens"].AsInt64() != 120 || a["gen_ai.usage.output_tokens"].AsInt64() != 30 || a["durableagent.retry.attempt"].AsInt64() != 2 {
		t.Errorf("usage/attempt attributes %v", a)
	}
	for _, kv := range s.Attributes() {
		if strings.Contains(kv.Value.String(), "secret plan") {
			t.Errorf("answer text in %s without otel.captureContent", kv.Key)
		}
	}
}

// A failed call carries its error type and an error status.
func TestModelCallErrorSpan(t *testing.T) {
	spans := underParent(t, func(ctx context.Context) {
		ModelCall(ctx, "openai", "gpt-x", 1, agent.Message{StopReason: agent.StopReasonError, ErrorStatus: 503})
	})
	s := spans[0]
	if a := attrs(s); a["error.type"].AsString() != "retryable" || a["http.response.status_code"].AsInt64() != 503 {
		t.Errorf("attributes %v", a)
	}
	if s.Status().Code != codes.Error {
		t.Errorf("status %v", s.Status())
	}
}

// otel.captureContent puts the answer and the tool output on the spans,
// bounded.
func TestCaptureContent(t *testing.T) {
	SetCapture(true)
	defer SetCapture(false)
	spans := underParent(t, func(ctx context.Context) {
		ModelCall(ctx, "anthropic", "m", 1, agent.Message{StopReason: agent.StopReasonStop,
			Content: []agent.ContentBlock{{Type: "text", Text: "hello"}}})
		ToolCall(ctx, tools.Bash, tools.Result{Content: strings.Repeat("x", 3*MaxContent)})
	})
	if got := attrs(spans[0])["gen_ai.completion"].AsString(); got != "hello" {
		t.Errorf("gen_ai.completion %q", got)
	}
	if got := attrs(spans[1])["durableagent.tool.output"].AsString(); len(got) != MaxContent {
		t.Errorf("tool output %d bytes, want %d", len(got), MaxContent)
	}
}

// A tool call span names the tool (an MCP tool by its name, a made-up
// name "other") as the
// GenAI conventions do, its outcome and bash's exit code.
func TestToolCallSpan(t *testing.T) {
	spans := underParent(t, func(ctx context.Context) {
		ToolCall(ctx, tools.Bash, tools.Result{IsError: true, Content: "boom", Details: map[string]any{"exitCode": 2}})
		ToolCall(ctx, "rm -rf /", tools.Result{IsError: true})
		ToolCall(ctx, "mcp__github__search_issues", tools.Result{})
		ToolCall(ctx, "mcp__"+strings.Repeat("x", 100), tools.Result{})
	})
	a := attrs(spans[0])
	if spans[0].Name() != "execute_tool bash" || a["tool.name"].AsString() != "bash" || a["gen_ai.tool.name"].AsString() != "bash" ||
		a["gen_ai.operation.name"].AsString() != "execute_tool" || a["durableagent.tool.outcome"].AsString() != "error" || a["process.exit.code"].AsInt64() != 2 {
		t.Errorf("bash span %q %v", spans[0].Name(), a)
	}
	if a := attrs(spans[1]); a["tool.name"].AsString() != "other" {
		t.Errorf("unknown tool named %q", a["tool.name"].AsString())
	}
	// An MCP tool by its name, as the metrics count it (issue 41); a name
	// longer than an MCP tool's is the model's and "other".
	if spans[2].Name() != "execute_tool mcp__github__search_issues" || attrs(spans[2])["gen_ai.tool.name"].AsString() != "mcp__github__search_issues" {
		t.Errorf("MCP tool span %q %v", spans[2].Name(), attrs(spans[2]))
	}
	if a := attrs(spans[3]); a["tool.name"].AsString() != "other" {
		t.Errorf("an over-long mcp__ name is named %q", a["tool.name"].AsString())
	}
	for _, kv := range spans[0].Attributes() {
		if strings.Contains(kv.Value.String(), "boom") {
			t.Errorf("tool output in %s without otel.captureContent", kv.Key)
		}
	}
}

// Without a span in the context (no tracing configured) nothing happens.
func TestNoParentNoSpan(t *testing.T) {
	ModelCall(context.Background(), "p", "m", 1, agent.Message{})
	ToolCall(context.Background(), "bash", tools.Result{})
}
