package tracing

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/activity"
	tmotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/metrics"
	"github.com/durableagent/durableagent/internal/tools"
	"github.com/durableagent/durableagent/retry"
)

// ScopeName is the instrumentation scope of the product's spans.
const ScopeName = "github.com/durableagent/durableagent"

// MaxContent bounds a content attribute (otel.captureContent).
const MaxContent = 4096

// Provider is the worker's tracer provider and its interceptor.
type Provider struct {
	tp       trace.TracerProvider
	shutdown func(context.Context) error
}

// FromEnv is an OTLP/gRPC exporting Provider when the standard
// OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) variable is set in
// the process environment, nil otherwise. The exporter reads the other
// OTEL_EXPORTER_OTLP_* variables (headers, insecure, timeout) itself. An
// endpoint URL with the http scheme is plaintext, as OTLP specifies.
func FromEnv(ctx context.Context, service string) (*Provider, error) {
	endpoint := cmp.Or(os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
	if endpoint == "" {
		return nil, nil
	}
	opt := otlptracegrpc.WithEndpoint(endpoint)
	if strings.Contains(endpoint, "://") {
		opt = otlptracegrpc.WithEndpointURL(endpoint)
	}
	exp, err := otlptracegrpc.New(ctx, opt)
	if err != nil {
		return nil, fmt.Errorf("traces: otlp exporter for %s: %w", endpoint, err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", service)))
	if err != nil {
		res = resource.Default()
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Provider{tp: tp, shutdown: tp.Shutdown}, nil
}

// New is a Provider over tp (a test's recorder).
func New(tp trace.TracerProvider) *Provider { return &Provider{tp: tp} }

// Interceptor is the SDK's tracing interceptor on p's tracer: a span for
// each workflow, activity, signal and update, workflow ones only when not
// replaying. The W3C trace context travels in Temporal headers. Queries
// get none: a follower queries a prompt's events several times a second,
// which would bury the prompt's trace (and make a root trace per query
// on the worker). The span of a task call's workflow is the call's
// (task.go).
func (p *Provider) Interceptor() (interceptor.Interceptor, error) {
	i, err := tmotel.NewTracingInterceptor(tmotel.TracerOptions{
		Tracer:              p.tp.Tracer(ScopeName),
		TextMapPropagator:   propagation.TraceContext{},
		DisableQueryTracing: true,
	})
	if err != nil {
		return nil, fmt.Errorf("traces: interceptor: %w", err)
	}
	return withTaskSpans{i}, nil
}

// Start starts a span of the product's tracer under ctx: the starter's
// root span of a prompt, whose context the client interceptor carries
// into the workflow it starts.
func (p *Provider) Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return p.tp.Tracer(ScopeName).Start(ctx, name, trace.WithAttributes(attrs...))
}

// Shutdown flushes and stops the exporter (nothing for New's, or for a
// nil Provider: tracing off).
func (p *Provider) Shutdown() {
	if p == nil || p.shutdown == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = p.shutdown(ctx)
}

// capture is otel.captureContent of this process's worker (SetCapture):
// the activities read it at each call, so they need no field of their own.
var capture atomic.Bool

// SetCapture sets whether spans carry the answer's text and the tool
// output, bounded (otel.captureContent; default false).
func SetCapture(on bool) { capture.Store(on) }

// startedAt is when the activity of ctx started this attempt (now
// outside an activity).
func startedAt(ctx context.Context) time.Time {
	if activity.IsActivity(ctx) {
		return activity.GetInfo(ctx).StartedTime
	}
	return time.Now()
}

// ModelCall records a span for a model call that ended with m, under the
// activity's span (none: nothing): GenAI attributes, the attempt of the
// prompt's call (retries count up), the error's type when it failed.
func ModelCall(ctx context.Context, provider, model string, attempt int, m agent.Message) {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() {
		return
	}
	_, span := parent.TracerProvider().Tracer(ScopeName).Start(ctx, "chat "+model,
		trace.WithSpanKind(trace.SpanKindClient), trace.WithTimestamp(startedAt(ctx)))
	span.SetAttributes(
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.system", provider),
		attribute.String("gen_ai.request.model", model),
		attribute.Int("durableagent.retry.attempt", attempt),
		attribute.String("gen_ai.response.finish_reasons", string(m.StopReason)),
	)
	if m.Model != "" {
		span.SetAttributes(attribute.String("gen_ai.response.model", m.Model))
	}
	if u := m.Usage; u != nil {
		span.SetAttributes(attribute.Int("gen_ai.usage.input_tokens", u.Input), attribute.Int("gen_ai.usage.output_tokens", u.Output))
		if u.Cost.Total > 0 {
			span.SetAttributes(attribute.Float64("durableagent.cost_usd", u.Cost.Total))
		}
	}
	if m.StopReason == agent.StopReasonError {
		span.SetAttributes(attribute.String("error.type", errorType(m)))
		if m.ErrorStatus != 0 {
			span.SetAttributes(attribute.Int("http.response.status_code", m.ErrorStatus))
		}
		if m.ErrorType != "" {
			span.SetAttributes(attribute.String("durableagent.provider_error_type", cut(m.ErrorType, 64)))
		}
		span.SetStatus(codes.Error, errorType(m))
	}
	if capture.Load() {
		span.SetAttributes(attribute.String("gen_ai.completion", cut(m.Text(), MaxContent)))
	}
	span.End()
}

// errorType is the class of a failed call's error as the retry policy
// sees it (retryable, usage_limit, context_overflow, fatal): bounded,
// and what decides what happens next.
func errorType(m agent.Message) string {
	return string(retry.Classify(retry.Outcome{StopReason: string(m.StopReason), ErrorMessage: m.ErrorMessage,
		ErrorStatus: m.ErrorStatus, ErrorType: m.ErrorType, ShouldRetry: m.ShouldRetry, RetryAfterMs: m.RetryAfterMs}).Class)
}

// ToolCall records a span for a tool call that ended with res, under the
// activity's span (none: nothing): the tool (a built-in's name, an MCP
// tool's mcp__server__tool as the metrics name it, "other" for a name the
// model made up), its outcome and, for bash, the exit code.
func ToolCall(ctx context.Context, tool string, res tools.Result) {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() {
		return
	}
	name := tool
	if !tools.Known(name) && !(tools.IsMCP(name) && len(name) <= 64) { // an MCP tool's name is at most 64 bytes
		name = "other"
	}
	_, span := parent.TracerProvider().Tracer(ScopeName).Start(ctx, "execute_tool "+name,
		trace.WithTimestamp(startedAt(ctx)))
	span.SetAttributes(toolAttrs(name)...)
	span.SetAttributes(attribute.String("durableagent.tool.outcome", metrics.ToolOutcome(ctx, res.IsError)))
	if code, ok := res.Details["exitCode"].(int); ok {
		span.SetAttributes(attribute.Int("process.exit.code", code))
	}
	if res.IsError {
		span.SetStatus(codes.Error, "tool call failed")
	}
	if capture.Load() {
		span.SetAttributes(attribute.String("durableagent.tool.output", cut(res.Content, MaxContent)))
	}
	span.End()
}

// cut cuts s to n bytes on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}
