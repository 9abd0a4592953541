package metrics

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	tmotel "go.temporal.io/sdk/contrib/opentelemetry"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/tools"
)

// MaxLabelLen bounds a provider or model label; MaxAttemptLabel is the
// highest attempt label (later attempts are counted under it, as "10+").
const (
	MaxLabelLen     = 64
	MaxAttemptLabel = 10
)

// ModelCall records a model call that ended with m, from the activity
// that made it (nothing outside an activity).
func ModelCall(ctx context.Context, provider, model string, m agent.Message) {
	if !activity.IsActivity(ctx) {
		return
	}
	RecordModelCall(activity.GetMetricsHandler(ctx), provider, model, m,
		time.Since(activity.GetInfo(ctx).StartedTime))
}

// RecordModelCall records a model call of duration d that ended with m:
// its outcome, tokens and cost.
func RecordModelCall(h client.MetricsHandler, provider, model string, m agent.Message, d time.Duration) {
	h = h.WithTags(map[string]string{LabelProvider: bound(provider), LabelModel: bound(model)})
	withOutcome := h.WithTags(map[string]string{LabelOutcome: oneOf(string(m.StopReason), "stop", "toolUse", "length", "error", "aborted")})
	withOutcome.Counter(ModelCalls).Inc(1)
	withOutcome.Timer(ModelCallDuration).Record(d)
	if m.Usage == nil {
		return
	}
	u := m.Usage
	for kind, n := range map[string]int{"input": u.Input, "output": u.Output, "cache_read": u.CacheRead, "cache_write": u.CacheWrite} {
		if n > 0 {
			h.WithTags(map[string]string{LabelKind: kind}).Counter(ModelTokens).Inc(int64(n))
		}
	}
	if u.Cost.Total > 0 {
		addFloat(h, ModelCost, u.Cost.Total)
	}
}

// addFloat adds v to a float counter: the SDK's handler has only integer
// counters, so it takes the OpenTelemetry meter under h (none: nothing).
func addFloat(h client.MetricsHandler, name string, v float64) {
	o := tmotel.ExtractMetricsHandler(h)
	if o == nil {
		return
	}
	c, err := o.GetMeter().Float64Counter(name)
	if err != nil {
		return
	}
	c.Add(context.Background(), v, metric.WithAttributeSet(o.GetAttributes()))
}

// ToolCall records a tool call that ended (isError: its result is an
// error), from the activity that ran it.
func ToolCall(ctx context.Context, tool string, isError bool) {
	if !activity.IsActivity(ctx) {
		return
	}
	RecordToolCall(activity.GetMetricsHandler(ctx), tool, ToolOutcome(ctx, isError), time.Since(activity.GetInfo(ctx).StartedTime))
}

// ToolOutcome is how a tool call ended, as its metrics and its span say:
// "cancelled" when ctx ended, else "error" (isError) or "ok".
func ToolOutcome(ctx context.Context, isError bool) string {
	switch {
	case ctx.Err() != nil:
		return "cancelled"
	case isError:
		return "error"
	}
	return "ok"
}

// RecordToolCall records a tool call of duration d.
func RecordToolCall(h client.MetricsHandler, tool, outcome string, d time.Duration) {
	t := h.WithTags(map[string]string{LabelTool: toolLabel(tool), LabelOutcome: oneOf(outcome, "ok", "error", "cancelled")})
	t.Counter(ToolCalls).Inc(1)
	t.Timer(ToolCallDuration).Record(d)
}

// Retry records a retry of a failed model call (h: the workflow's
// metrics handler).
func Retry(h client.MetricsHandler, class string, attempt int) {
	a := strconv.Itoa(min(max(attempt, 0), MaxAttemptLabel))
	if attempt >= MaxAttemptLabel {
		a += "+"
	}
	h.WithTags(map[string]string{LabelClass: oneOf(class, "retryable", "usage_limit", "context_overflow", "fatal", "none"),
		LabelAttempt: a}).Counter(Retries).Inc(1)
}

// RetryWaited counts a prompt out of StateWaitingRetry after waiting d
// in a retry's backoff, and records d as backoff time.
func RetryWaited(h client.MetricsHandler, d time.Duration) {
	Leave(h, StateWaitingRetry)
	h.Timer(Backoff).Record(d)
}

// Enter counts a prompt into state (StateRunning, StateWaitingApproval,
// StateWaitingRetry); Leave counts it out. They come in pairs, called
// from workflow code (never from a defer: an evicted workflow runs its
// defers without ending).
func Enter(h client.MetricsHandler, state string) { stateCounter(h, state).Inc(1) }

// Leave counts a prompt out of state (see Enter).
func Leave(h client.MetricsHandler, state string) { stateCounter(h, state).Inc(-1) }

// EnterSubAgent counts a sub-agent's prompt into the running sub-agents;
// LeaveSubAgent counts it out. Like Enter and Leave they come in pairs,
// from workflow code, never from a defer.
func EnterSubAgent(h client.MetricsHandler) { h.Counter(SubAgents).Inc(1) }

// LeaveSubAgent counts a sub-agent's prompt out (see EnterSubAgent).
func LeaveSubAgent(h client.MetricsHandler) { h.Counter(SubAgents).Inc(-1) }

func stateCounter(h client.MetricsHandler, state string) client.MetricsCounter {
	return h.WithTags(map[string]string{LabelState: oneOf(state, StateRunning, StateWaitingApproval, StateWaitingRetry)}).Counter(Prompts)
}

// Compaction records an automatic compaction that ended with end (its
// auto_compaction_end event), for reason (threshold, overflow).
func Compaction(h client.MetricsHandler, reason string, end agent.Event) {
	outcome := "ok"
	switch {
	case end.Aborted:
		outcome = "aborted"
	case end.ErrorMessage != "":
		outcome = "failed"
	case end.Result == nil:
		outcome = "nothing"
	}
	h.WithTags(map[string]string{LabelReason: oneOf(reason, "threshold", "overflow"), LabelOutcome: outcome}).Counter(Compactions).Inc(1)
}

// MaxMCPToolLabels bounds the MCP tool names a worker uses as labels.
const MaxMCPToolLabels = 200

var mcpLabels = struct {
	sync.Mutex
	seen map[string]bool
}{seen: map[string]bool{}}

// toolLabel is a tool call's label: a built-in tool's name, an MCP tool's
// mcp__server__tool (cut to MaxLabelLen; the first MaxMCPToolLabels of
// them, later ones "mcp_other", since a server names its own tools), or
// "other" for a name the model made up.
func toolLabel(tool string) string {
	switch {
	case tools.Known(tool):
		return tool
	case !tools.IsMCP(tool):
		return "other"
	}
	tool = bound(tool)
	mcpLabels.Lock()
	defer mcpLabels.Unlock()
	if !mcpLabels.seen[tool] && len(mcpLabels.seen) >= MaxMCPToolLabels {
		return "mcp_other"
	}
	mcpLabels.seen[tool] = true
	return tool
}

// oneOf is v when it is one of the values, else "other".
func oneOf(v string, values ...string) string {
	if slices.Contains(values, v) {
		return v
	}
	return "other"
}

// bound cuts a free-form label value (a provider or model name) to
// MaxLabelLen bytes on a rune boundary; "" is "unknown".
func bound(v string) string {
	if v == "" {
		return "unknown"
	}
	if len(v) <= MaxLabelLen {
		return v
	}
	return strings.ToValidUTF8(v[:MaxLabelLen], "")
}
