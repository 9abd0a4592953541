package metrics

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/durableagent/durableagent/agent"
)

// sdkTags are tags the SDK puts on a workflow's or activity's handler.
var sdkTags = map[string]string{"namespace": "default", "task_queue": "q", "workflow_type": "Prompt"}

// recordAll records one of each product metric through a fresh handler
// and returns what Prometheus gathers.
func recordAll(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewRegistry()
	root, mp, err := NewHandler(reg, func(err error) { t.Errorf("meter error: %v", err) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mp.Shutdown(t.Context()) })
	h := root.WithTags(sdkTags)
	RecordModelCall(h, "anthropic", "claude-x", agent.Message{StopReason: agent.StopReasonToolUse,
		Usage: &agent.Usage{Input: 100, Output: 20, CacheRead: 5, Cost: agent.UsageCost{Total: 0.25}}}, 2*time.Second)
	RecordModelCall(h, "anthropic", "claude-x", agent.Message{StopReason: agent.StopReasonError}, time.Second)
	RecordToolCall(h, "bash", "ok", 300*time.Millisecond)
	RecordToolCall(h, "/etc/passwd", "error", time.Millisecond)
	RecordToolCall(h, "mcp__github__create_issue", "ok", time.Millisecond)
	Retry(h, "retryable", 1)
	Retry(h, "retryable", 42)
	Enter(h, StateWaitingRetry)
	RetryWaited(h, 3*time.Second)
	Compaction(h, "threshold", agent.Event{Result: &agent.CompactionResult{}})
	Enter(h, StateRunning)
	Enter(h, StateWaitingApproval)
	Leave(h, StateWaitingApproval)
	EnterSubAgent(h)
	EnterSubAgent(h)
	LeaveSubAgent(h)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

func labelsOf(m *dto.Metric) map[string]string {
	l := map[string]string{}
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}

// Each product metric has its documented name, Prometheus type and
// labels (the product's and the SDK's), and nothing else as a label.
func TestSpecsNameTypeLabels(t *testing.T) {
	fams := recordAll(t)
	for _, s := range Specs {
		f, ok := fams[s.Name]
		if !ok {
			t.Errorf("%s: not exported", s.Name)
			continue
		}
		if f.GetType() != s.Type {
			t.Errorf("%s: type %v, want %s", s.Name, f.GetType(), s.Type)
		}
		want := append(slices.Clone(s.Labels), "namespace", "task_queue", "workflow_type")
		slices.Sort(want)
		for _, m := range f.GetMetric() {
			var got []string
			for k := range labelsOf(m) {
				got = append(got, k)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s: labels %v, want %v", s.Name, got, want)
			}
		}
	}
}

// The recorded values are what happened, with bounded label values.
func TestValuesAndBoundedLabels(t *testing.T) {
	fams := recordAll(t)
	find := func(name string, labels map[string]string) *dto.Metric {
		t.Helper()
		for _, m := range fams[name].GetMetric() {
			l := labelsOf(m)
			match := true
			for k, v := range labels {
				match = match && l[k] == v
			}
			if match {
				return m
			}
		}
		t.Fatalf("%s%v: not found", name, labels)
		return nil
	}
	if v := find("durableagent_model_calls_total", map[string]string{"outcome": "toolUse"}).GetCounter().GetValue(); v != 1 {
		t.Errorf("toolUse calls = %v", v)
	}
	if v := find("durableagent_model_tokens_total", map[string]string{"kind": "input"}).GetCounter().GetValue(); v != 100 {
		t.Errorf("input tokens = %v", v)
	}
	if v := find("durableagent_model_cost_usd_total", map[string]string{"model": "claude-x"}).GetCounter().GetValue(); v != 0.25 {
		t.Errorf("cost = %v", v)
	}
	// A tool name the model made up is not a label value.
	if v := find("durableagent_tool_calls_total", map[string]string{"tool": "other", "outcome": "error"}).GetCounter().GetValue(); v != 1 {
		t.Errorf("other tool calls = %v", v)
	}
	// An MCP tool's calls are counted under its mcp__server__tool name.
	if v := find("durableagent_tool_calls_total", map[string]string{"tool": "mcp__github__create_issue", "outcome": "ok"}).GetCounter().GetValue(); v != 1 {
		t.Errorf("MCP tool calls = %v", v)
	}
	if v := find("durableagent_retries_total", map[string]string{"attempt": "10+"}).GetCounter().GetValue(); v != 1 {
		t.Errorf("attempt 10+ = %v", v)
	}
	if v := find("durableagent_backoff_duration_seconds", nil).GetHistogram().GetSampleSum(); v != 3 {
		t.Errorf("backoff seconds = %v", v)
	}
	if v := find("durableagent_compactions_total", map[string]string{"reason": "threshold", "outcome": "ok"}).GetCounter().GetValue(); v != 1 {
		t.Errorf("compactions = %v", v)
	}
	if v := find("durableagent_prompts", map[string]string{"state": "running"}).GetGauge().GetValue(); v != 1 {
		t.Errorf("running = %v", v)
	}
	if v := find("durableagent_prompts", map[string]string{"state": "waiting_approval"}).GetGauge().GetValue(); v != 0 {
		t.Errorf("waiting for approval after leaving = %v", v)
	}
	if v := find("durableagent_subagents", nil).GetGauge().GetValue(); v != 1 {
		t.Errorf("sub-agents running after two started and one ended = %v", v)
	}
}

func TestBound(t *testing.T) {
	long := strings.Repeat("é", 40) // 80 bytes
	if got := bound(long); len(got) > MaxLabelLen || !strings.HasPrefix(long, got) || got == "" {
		t.Errorf("bound(long) = %q", got)
	}
	if bound("") != "unknown" {
		t.Errorf("bound empty = %q", bound(""))
	}
}

// Serve answers /metrics with the Prometheus text format, the Go
// runtime's metrics included.
func TestServe(t *testing.T) {
	s, err := Serve("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	Enter(s.Handler, StateRunning)
	resp, err := http.Get(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"# TYPE durableagent_prompts gauge", `durableagent_prompts{state="running"} 1`, "go_goroutines"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	if _, err := Serve(s.ln.Addr().String()); err == nil || !strings.Contains(err.Error(), "metrics.listen") {
		t.Errorf("second Serve on a taken address: %v", err)
	}
}

// A server names its own tools: past MaxMCPToolLabels distinct names, an
// MCP tool's calls are counted as "mcp_other"; a name already seen keeps
// its label.
func TestToolLabel_MCPNamesAreBounded(t *testing.T) {
	first := toolLabel("mcp__s__first")
	for i := range MaxMCPToolLabels {
		toolLabel(fmt.Sprintf("mcp__s__t%d", i))
	}
	if got := toolLabel("mcp__s__one_too_many"); got != "mcp_other" {
		t.Errorf("a new MCP tool past the bound: %q, want mcp_other", got)
	}
	if got := toolLabel("mcp__s__first"); got != first || first != "mcp__s__first" {
		t.Errorf("an MCP tool seen before: %q then %q, want its name", first, got)
	}
	if got := toolLabel("mcp__s__" + strings.Repeat("x", 100)); got != "mcp_other" {
		t.Errorf("long new name past the bound: %q", got)
	}
}
