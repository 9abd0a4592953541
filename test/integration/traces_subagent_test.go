package integration

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.temporal.io/sdk/interceptor"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/tracing"
	"github.com/durableagent/durableagent/workflows"
)

// subAgentScript gives the scripted model of every sub-agent's prompt (a
// sub-agent gets none of its parent's fault script) the script of its
// session.
type subAgentScript struct {
	inner  llm.Provider
	script func(session string) []string
}

func (p subAgentScript) Complete(ctx context.Context, req llm.Request) agent.Message {
	if strings.Contains(req.SessionID, ".task-") && len(req.Faults) == 0 {
		req.Faults = p.script(req.SessionID)
	}
	return p.inner.Complete(ctx, req)
}

// scriptSubAgents starts the env's worker with script as its sub-agents'.
func (e *env) scriptSubAgents(script func(session string) []string) {
	e.ext.Activities = func(a *activities.Activities) {
		inner := a.Provider
		a.Provider = func(name string) (llm.Provider, error) {
			p, err := inner(name)
			return subAgentScript{p, script}, err
		}
	}
	e.startWorker()
}

// Issue 26 (traces: "sub-agent, the child's trace linked to its parent's
// span") on the real server: a prompt whose model calls task twice is one
// trace. Each task call is an execute_tool task span (tool.name task, the
// call id and the sub-agent's session as attributes), and the sub-agent's
// model-call and tool-call spans are its descendants.
func TestIntegration_TracesOfSubAgents(t *testing.T) {
	e := newEnv(t)
	e.s.Tools.Enabled = append(e.s.Tools.Enabled, "task")
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	ti, err := tracing.New(tp).Interceptor()
	if err != nil {
		t.Fatal(err)
	}
	e.ext.Interceptors = []interceptor.WorkerInterceptor{ti}
	// Each sub-agent writes a file named after its session, then answers.
	e.scriptSubAgents(func(session string) []string {
		return []string{`tool:write {"path":"` + session + `.txt","content":"x"}`, `text:sub-agent done`}
	})
	const parent = "traces-subagents"
	in := client.PromptInput(e.s, parent, "delegate two writes")
	in.Workspace = t.TempDir()
	in.Model.Faults = []string{
		`tools:[{"name":"task","arguments":{"description":"first","prompt":"write one file"}},` +
			`{"name":"task","arguments":{"description":"second","prompt":"write another file"}}]`,
		`text:both done`}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("result %+v %v", res, err)
	}
	children := map[string]string{} // tool call id → sub-agent session
	for _, ev := range e.events(parent) {
		if ev.Type == agent.EventSubAgentStart {
			children[ev.ToolCallID] = ev.SessionID
		}
	}
	if len(children) != 2 {
		t.Fatalf("sub-agents started %v, want 2", children)
	}
	e.stopWorker()

	spans := rec.Ended()
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	var root sdktrace.ReadOnlySpan
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
		if s.Name() == "RunWorkflow:"+workflows.PromptWorkflowName && attr(s, "temporalWorkflowID") == workflows.WorkflowID(parent) {
			root = s
		}
	}
	if root == nil {
		t.Fatalf("no workflow span of the parent's prompt; spans: %v", spanNames(spans))
	}
	// under says whether s descends from a.
	under := func(s, a sdktrace.ReadOnlySpan) bool {
		for p, ok := s, true; ok; p, ok = byID[p.Parent().SpanID()] {
			if p.SpanContext().SpanID() == a.SpanContext().SpanID() {
				return true
			}
		}
		return false
	}
	for callID, child := range children {
		var task sdktrace.ReadOnlySpan
		for _, s := range spans {
			if s.Name() == "execute_tool task" && attr(s, "gen_ai.tool.call.id") == callID {
				task = s
			}
		}
		if task == nil {
			t.Fatalf("no execute_tool task span of call %s; spans: %v", callID, spanNames(spans))
		}
		for k, want := range map[string]string{"gen_ai.operation.name": "execute_tool", "tool.name": "task",
			"gen_ai.tool.name": "task", "durableagent.subagent.session": child} {
			if got := attr(task, k); got != want {
				t.Errorf("task span of call %s: %s = %q, want %q", callID, k, got, want)
			}
		}
		if task.SpanContext().TraceID() != root.SpanContext().TraceID() || !under(task, root) {
			t.Errorf("task span of call %s is not under the parent prompt's span", callID)
		}
		// The sub-agent's own spans: its prompt's model calls and its write.
		var chats, writes int
		for _, s := range spans {
			if !under(s, task) {
				continue
			}
			switch {
			case strings.HasPrefix(s.Name(), "chat "):
				chats++
			case s.Name() == "execute_tool write":
				writes++
			}
		}
		if chats != 2 || writes != 1 {
			t.Errorf("under the task span of call %s (sub-agent %s): %d model call spans and %d write spans, want 2 and 1",
				callID, child, chats, writes)
		}
	}
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

func spanNames(spans []sdktrace.ReadOnlySpan) []string {
	m := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		m[s.Name()] = append(m[s.Name()], s)
	}
	return names(m)
}
