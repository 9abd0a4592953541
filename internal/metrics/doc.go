// Package metrics is the worker's Prometheus metrics: the Temporal SDK's
// own worker metrics and the product's (model calls, retries, backoff,
// compactions, tool calls, tokens and cost, prompts by state, sub-agents
// running), through the SDK's OpenTelemetry metrics handler and the
// OpenTelemetry Prometheus exporter.
//
// The contract:
//   - NewHandler is the one client.MetricsHandler the worker gives the SDK
//     (app.NewWorker puts it on its client); Serve serves it on /metrics.
//   - Workflow code records through workflow.GetMetricsHandler (the SDK
//     drops what is recorded while a workflow replays), activity code
//     through the activity's context (ModelCall, ToolCall). Recording is
//     never a Temporal command: it adds nothing to history.
//   - Every label value is bounded: provider and model names (cut to
//     MaxLabelLen), enumerations (outcome, class, state, reason), known
//     tool names and the first MaxMCPToolLabels MCP tool names ("other",
//     "mcp_other" for the rest) and attempts up to MaxAttemptLabel.
//     No session id, prompt text or path is ever a label.
//   - Specs lists every product metric with its Prometheus name, type and
//     labels: the documentation, the dashboard and the tests read it.
package metrics
