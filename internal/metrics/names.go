package metrics

import dto "github.com/prometheus/client_model/go"

// Instrument names as the SDK's handler sees them. The Prometheus
// exporter adds _total to counters and _seconds to timers.
const (
	ModelCalls        = "durableagent_model_calls"
	ModelCallDuration = "durableagent_model_call_duration"
	ModelTokens       = "durableagent_model_tokens"
	ModelCost         = "durableagent_model_cost_usd"
	Retries           = "durableagent_retries"
	Backoff           = "durableagent_backoff_duration"
	Compactions       = "durableagent_compactions"
	ToolCalls         = "durableagent_tool_calls"
	ToolCallDuration  = "durableagent_tool_call_duration"
	Prompts           = "durableagent_prompts"
	SubAgents         = "durableagent_subagents"
)

// Label names of the product's metrics.
const (
	LabelProvider = "provider"
	LabelModel    = "model"
	LabelOutcome  = "outcome"
	LabelKind     = "kind"
	LabelClass    = "class"
	LabelAttempt  = "attempt"
	LabelReason   = "reason"
	LabelTool     = "tool"
	LabelState    = "state"
)

// States of the Prompts gauge.
const (
	StateRunning         = "running"
	StateWaitingApproval = "waiting_approval"
	StateWaitingRetry    = "waiting_retry"
)

// Spec is one product metric as Prometheus shows it.
type Spec struct {
	// Name is the Prometheus name (with the exporter's suffixes).
	Name string
	// Type is the Prometheus type: counter, histogram or gauge.
	Type dto.MetricType
	// Labels are the product's labels, besides the SDK's (namespace,
	// task_queue, workflow_type or activity_type).
	Labels []string
	Help   string
}

// Specs are the product's metrics.
var Specs = []Spec{
	{ModelCalls + "_total", dto.MetricType_COUNTER, []string{LabelProvider, LabelModel, LabelOutcome},
		"Model calls that ended, by outcome (the answer's stop reason: stop, toolUse, length, error, aborted)."},
	{ModelCallDuration + "_seconds", dto.MetricType_HISTOGRAM, []string{LabelProvider, LabelModel, LabelOutcome},
		"Duration of a model call attempt."},
	{ModelTokens + "_total", dto.MetricType_COUNTER, []string{LabelProvider, LabelModel, LabelKind},
		"Tokens of model calls, by kind (input, output, cache_read, cache_write)."},
	{ModelCost + "_total", dto.MetricType_COUNTER, []string{LabelProvider, LabelModel},
		"Cost of model calls in US dollars (model.prices; 0 when unknown)."},
	{Retries + "_total", dto.MetricType_COUNTER, []string{LabelClass, LabelAttempt},
		"Retries of failed model calls, by the error's class and the attempt number."},
	{Backoff + "_seconds", dto.MetricType_HISTOGRAM, nil,
		"Time prompts spent waiting in retry backoff (its _sum is the seconds spent)."},
	{Compactions + "_total", dto.MetricType_COUNTER, []string{LabelReason, LabelOutcome},
		"Automatic compactions, by reason (threshold, overflow) and outcome (ok, failed, aborted, nothing)."},
	{ToolCalls + "_total", dto.MetricType_COUNTER, []string{LabelTool, LabelOutcome},
		"Tool calls run by the worker, by tool and outcome (ok, error, cancelled)."},
	{ToolCallDuration + "_seconds", dto.MetricType_HISTOGRAM, []string{LabelTool, LabelOutcome},
		"Duration of a tool call attempt."},
	{Prompts, dto.MetricType_GAUGE, []string{LabelState},
		"Prompts running, waiting for approval and waiting for a retry (sum it over the workers)."},
	{SubAgents, dto.MetricType_GAUGE, nil,
		"Sub-agents running: task calls whose sub-agent's prompt runs, each also a running prompt (sum it over the workers)."},
}

// upDown are the instruments that go down as well as up: gauges made of
// transitions, so that the prompts of every workflow add up.
var upDown = map[string]bool{Prompts: true, SubAgents: true}
