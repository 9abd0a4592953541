package tools

import (
	"fmt"
	"strings"
	"time"
)

// Kind is how a workflow runs a tool's call.
type Kind int

const (
	// KindActivity: the call is the RunTool activity on a worker (every
	// tool of this package).
	KindActivity Kind = iota
	// KindSubAgent: the call runs a sub-agent (the task tool): the
	// calling prompt reads the call's arguments, starts the sub-agent's
	// prompt as its child workflow in a session of its own, and writes the
	// call's result entry as RunTool does: the door for tools that are
	// agents themselves.
	KindSubAgent
)

// Default timeouts of a tool call.
const (
	// DefaultTimeout bounds a call of read, write, edit, grep, find and ls.
	DefaultTimeout = 5 * time.Minute
	// DefaultBashTimeout bounds a bash call that names no timeout and has
	// no tools.bashTimeoutMs: long builds and test runs are normal.
	DefaultBashTimeout = 2 * time.Hour
	// timeoutMargin is added to a call's own timeout, so the command times
	// out (with its output) before its activity does.
	timeoutMargin = time.Minute
)

// Spec is what a workflow needs to know to dispatch a tool's calls. It is
// declared here, once per tool; the workflow names no tool itself.
type Spec struct {
	// ReadOnly: the tool has no effect on the workspace, so its calls may
	// run in parallel with each other.
	ReadOnly bool
	// Attempts is how many times a call may be tried. 1: the call must
	// never run twice, its effects cannot be recognised afterwards (bash),
	// and a call cut before it reported may or may not have completed.
	// Every other tool may be attempted again: it has no effect, is
	// idempotent (write), or recognises its own change (edit).
	Attempts int32
	// Timeout is the start-to-close timeout of a call that names none.
	Timeout time.Duration
	// TimeoutArg: the call's own timeout argument, or else the prompt's
	// default (tools.bashTimeoutMs), bounds the call (CallTimeout).
	TimeoutArg bool
	// Kind says whether a call is an activity or a sub-agent.
	Kind Kind
	// Concurrent: calls of the tool may run in parallel with each other
	// (each works apart: a sub-agent in a session of its own), though not
	// with other tools' calls.
	Concurrent bool
	// Command: the call's main argument is a shell command (bash's
	// "command"), not a path; the approval policy matches it so.
	Command bool
}

// fileSpec is the spec of a tool that may be attempted again (it has no
// effect, is idempotent or recognises its own change); readOnlySpec of
// one that has no effect. A name no tool has gets fileSpec: its call runs
// as an activity, which answers that the tool is unknown.
var (
	fileSpec     = Spec{Attempts: 3, Timeout: DefaultTimeout}
	readOnlySpec = Spec{ReadOnly: true, Attempts: 3, Timeout: DefaultTimeout}
)

// mcpSpec is the spec of an MCP server's tool (IsMCP): one attempt,
// since the server's effects cannot be recognised afterwards; the
// worker's MCP client retries a call of a tool that says it is read-only
// or idempotent itself, after a transport failure (internal/mcp).
var mcpSpec = Spec{Attempts: 1, Timeout: DefaultTimeout}

// SpecOf returns the spec of a tool (fileSpec for a name no tool has).
func SpecOf(name string) Spec {
	if t, ok := tools[name]; ok {
		return t.spec
	}
	if IsMCP(name) {
		return mcpSpec
	}
	return fileSpec
}

// MCPPrefix starts the name of every MCP server's tool the model sees:
// mcp__<server>__<tool>.
const MCPPrefix = "mcp__"

// IsMCP reports whether name is an MCP server's tool.
func IsMCP(name string) bool { return strings.HasPrefix(name, MCPPrefix) }

// Enabled reports whether tools.enabled (list) enables the tool name: a
// name it lists, or an MCP tool an item ending in "*" covers
// (mcp__github__* enables every tool of the server github).
func Enabled(list []string, name string) bool {
	for _, it := range list {
		if it == name || IsMCP(name) && strings.HasSuffix(it, "*") && strings.HasPrefix(name, strings.TrimSuffix(it, "*")) {
			return true
		}
	}
	return false
}

// NotEnabled is the answer to a call of the tool name that tools.enabled
// (list) does not enable: RunTool's, and the workflow's for a sub-agent.
func NotEnabled(list []string, name string) string {
	return fmt.Sprintf("Tool %q is not enabled for this session (tools.enabled: %s)", name, strings.Join(list, ", "))
}

// CallTimeout is the start-to-close timeout of one call: for a tool with
// TimeoutArg, the call's own timeout in seconds if above 0, else
// defaultMs if above 0, plus a margin (so the command times out with its
// output before the activity does); else Timeout. Each is capped at
// MaxBashTimeout before the conversion, so no value (a model's argument,
// a client's setting, NaN or infinity) can overflow time.Duration into a
// negative timeout, which Temporal refuses, failing the workflow task on
// every retry. The tool itself refuses a timeout above the maximum with
// an error result the model can correct (BashTimeout).
func (s Spec) CallTimeout(argSec float64, defaultMs int64) time.Duration {
	if !s.TimeoutArg {
		return s.Timeout
	}
	var d time.Duration
	switch {
	case argSec > 0: // false for NaN
		d = time.Duration(min(argSec, MaxBashTimeout.Seconds()) * float64(time.Second))
	case defaultMs > 0:
		d = time.Duration(min(defaultMs, MaxBashTimeout.Milliseconds())) * time.Millisecond
	default:
		return s.Timeout
	}
	return d + timeoutMargin
}
