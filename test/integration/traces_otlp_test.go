package integration

import (
	"context"
	"encoding/hex"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"

	"github.com/durableagent/durableagent/internal/cli"
)

// receiver is an OTLP/gRPC trace receiver: what a collector or a tracing
// backend runs. It keeps every span it is sent, with its service.
type receiver struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []receivedSpan
}

type receivedSpan struct {
	service string
	span    *tracepb.Span
}

func (r *receiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := stringAttr(rs.GetResource().GetAttributes(), "service.name")
		for _, ss := range rs.GetScopeSpans() {
			for _, sp := range ss.GetSpans() {
				r.spans = append(r.spans, receivedSpan{service, sp})
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// trace is the spans received so far of one trace id.
func (r *receiver) trace(id string) []receivedSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []receivedSpan
	for _, s := range r.spans {
		if hex.EncodeToString(s.span.GetTraceId()) == id {
			out = append(out, s)
		}
	}
	return out
}

func stringAttr(kvs []*commonpb.KeyValue, key string) string {
	for _, kv := range kvs {
		if kv.GetKey() == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

func intAttr(kvs []*commonpb.KeyValue, key string) (int64, bool) {
	for _, kv := range kvs {
		if kv.GetKey() == key {
			return kv.GetValue().GetIntValue(), true
		}
	}
	return 0, false
}

// startReceiver serves OTLP/gRPC on a loopback port and returns its
// endpoint URL (plaintext: http).
func startReceiver(t *testing.T) (*receiver, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	r := &receiver{}
	collectortrace.RegisterTraceServiceServer(srv, r)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return r, "http://" + ln.Addr().String()
}

var traceLineRE = regexp.MustCompile(`(?m)^trace: ([0-9a-f]{32})$`)

// Issue 26 (traces) end to end over OTLP: with OTEL_EXPORTER_OTLP_ENDPOINT
// set, `starter prompt` prints its trace id, and a receiver gets one trace
// holding the starter's root span, the workflow's span, a model call span
// per attempt with the GenAI attributes (the 503 and its retry), and the
// tool call's span; no prompt text in any attribute.
func TestIntegration_TracesExportedOverOTLP(t *testing.T) {
	e := newEnv(t)
	recv, endpoint := startReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint) // the in-process worker reads the process environment
	e.startWorker()
	defer e.stopWorker() // flushes the worker's spans

	const secret = "the-prompt-text-stays-out-of-spans"
	ws := t.TempDir()
	code, out, stderr := e.starterWith(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint},
		"prompt", "--session", "traced", "--workspace", ws,
		"--fault", e503, "--fault", `tool:bash {"command":"exit 3"}`, "--fault", "text:done", secret)
	if code != cli.ExitOK {
		t.Fatalf("prompt exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	m := traceLineRE.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("starter prompt printed no trace id on stderr:\n%s", stderr)
	}
	id := m[1]

	// The worker's batcher exports every few seconds: wait for the spans.
	want := func(spans []receivedSpan) []string {
		var missing []string
		has := func(what string, ok func(receivedSpan) bool) {
			if !slices.ContainsFunc(spans, ok) {
				missing = append(missing, what)
			}
		}
		has("the starter's root span", func(s receivedSpan) bool {
			return s.service == "durable-agent-starter" && s.span.GetName() == "prompt traced" && len(s.span.GetParentSpanId()) == 0
		})
		has("the worker's Prompt workflow span", func(s receivedSpan) bool {
			return s.service == "durable-agent-worker" && strings.HasSuffix(s.span.GetName(), ":Prompt") && strings.HasPrefix(s.span.GetName(), "RunWorkflow")
		})
		has("the failed model call (the 503, attempt 0)", func(s receivedSpan) bool {
			a := s.span.GetAttributes()
			n, ok := intAttr(a, "durableagent.retry.attempt")
			return stringAttr(a, "gen_ai.system") == "scripted" && stringAttr(a, "error.type") == "retryable" && ok && n == 0
		})
		has("the retried model call (attempt 1)", func(s receivedSpan) bool {
			a := s.span.GetAttributes()
			n, ok := intAttr(a, "durableagent.retry.attempt")
			return stringAttr(a, "gen_ai.request.model") != "" && ok && n == 1 && stringAttr(a, "error.type") == ""
		})
		has("the bash tool call with its exit code", func(s receivedSpan) bool {
			a := s.span.GetAttributes()
			n, ok := intAttr(a, "process.exit.code")
			return stringAttr(a, "tool.name") == "bash" && ok && n == 3
		})
		return missing
	}
	deadline := time.Now().Add(30 * time.Second)
	var missing []string
	for {
		missing = want(recv.trace(id))
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	spans := recv.trace(id)
	if len(missing) > 0 {
		var names []string
		for _, s := range spans {
			names = append(names, s.service+"/"+s.span.GetName())
		}
		t.Fatalf("trace %s lacks %s; it has %d spans: %v", id, strings.Join(missing, ", "), len(spans), names)
	}
	for _, s := range spans {
		if strings.Contains(s.span.GetName(), "Query") {
			t.Errorf("span %s/%s: queries (a follower polls events) are not traced", s.service, s.span.GetName())
		}
		for _, kv := range s.span.GetAttributes() {
			if strings.Contains(kv.GetValue().String(), secret) {
				t.Errorf("span %s attribute %s holds the prompt text", s.span.GetName(), kv.GetKey())
			}
		}
	}
	t.Logf("trace %s: %d spans", id, len(spans))
}
