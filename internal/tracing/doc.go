// Package tracing is the worker's OpenTelemetry traces: the Temporal SDK's
// tracing interceptor (replay-safe workflow spans; context carried from
// client to workflow to activity) exported over OTLP, plus a span per
// model call with the GenAI semantic conventions' attributes and a span
// per tool call.
//
// The contract:
//   - FromEnv is nil unless OTEL_EXPORTER_OTLP_ENDPOINT (or
//     OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set: no exporter, no cost.
//   - ModelCall and ToolCall are one-line calls from the activities. They
//     record under the activity's span and do nothing without one.
//   - A task tool call (a sub-agent) is the span of the sub-agent's
//     prompt's first run, named "execute_tool task", in the calling prompt's trace; the
//     sub-agent's own spans are its descendants (task.go).
//   - No secret, prompt text or tool output is a span attribute unless
//     otel.captureContent is true (SetCapture), and then
//     bounded to MaxContent bytes.
package tracing
