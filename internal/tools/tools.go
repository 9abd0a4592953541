package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
)

// Names of the tools.
const (
	Read  = "read"
	Write = "write"
	Edit  = "edit"
	Bash  = "bash"
	Grep  = "grep"
	Find  = "find"
	Ls    = "ls"
)

// Truncation limits (pi's): MaxLines lines or MaxBytes bytes, whichever comes
// first; grep match lines are cut at GrepMaxLineLength characters.
const (
	MaxLines          = 2000
	MaxBytes          = 50 * 1024
	GrepMaxLineLength = 500
)

// Options is the environment one call runs in.
type Options struct {
	// Workspace is the absolute path of the session's workspace: the cwd of
	// every tool; relative paths resolve against it ("" : the process's cwd).
	Workspace string
	// Confine refuses paths outside Workspace (after resolving "..", and
	// symlinks of existing path prefixes). The error names the path and the
	// workspace.
	Confine bool
	// OutputDir is where bash writes the full output of a truncated
	// command: a directory relative to Workspace, made, written and pruned
	// through the workspace's os.Root, so that no link a command planted
	// leads the worker outside the workspace ("": durable-agent-bash in
	// os.TempDir()).
	OutputDir string
	// Secrets are masked in bash's output (Masked) as it is written: in the
	// output tail, OnUpdate's snapshots and the full output, also when the
	// command printed one in pieces.
	Secrets []string
	// Env is the environment for bash (nil or empty: ScrubEnv(os.Environ(), nil)).
	Env []string
	// Rerun says this is a re-run of a call whose first attempt may have
	// applied its effect (see edit).
	Rerun bool
	// OnUpdate is called by bash with the accumulated output tail
	// (replace-not-append), at most every 100 ms, never after Run returns.
	// May be nil.
	OnUpdate func(partial string)
	// DefaultTimeout is the bash timeout when the call gives none (0: none).
	DefaultTimeout time.Duration
	// Runner runs the call's commands and file accesses (nil: Local).
	Runner Runner
	// PathRule says why the approval policy refuses a path the call
	// reaches ("": it does not), given its real location: absolute, every
	// symbolic link resolved, under Workspace as given when inside it.
	// read, write, edit and a grep of one file refuse such a path in one
	// line; grep, find and ls pass over such a file of their walk and say
	// how many they passed over. nil: no rule applies.
	PathRule func(abs string) string
}

// Result is the outcome of one tool call.
type Result struct {
	// Content is the text the model sees (already truncated, with the notice).
	Content string
	// IsError marks a failed call.
	IsError bool
	// Images are image blocks that follow Content (an MCP tool's result).
	Images []agent.ContentBlock
	// Details holds optional extras, e.g. "truncated": true,
	// "fullOutputPath": "...", "exitCode": N, "alreadyApplied": true.
	Details map[string]any
}

type toolDef struct {
	description string
	schema      string
	spec        Spec
	run         func(ctx context.Context, args json.RawMessage, opts *Options) Result
}

var tools = map[string]*toolDef{
	Read:  &readTool,
	Write: &writeTool,
	Edit:  &editTool,
	Bash:  &bashTool,
	Grep:  &grepTool,
	Find:  &findTool,
	Ls:    &lsTool,
	Task:  &taskTool,
}

// All returns the names of the seven tools, in pi's order.
func All() []string { return []string{Read, Write, Edit, Bash, Grep, Find, Ls} }

// Known reports whether name is one of the tools: the seven, or task.
func Known(name string) bool { _, ok := tools[name]; return ok }

// Specs returns the specs (name, description, JSON Schema) of the named
// tools, in the given order; unknown names are skipped.
func Specs(names []string) []agent.ToolSpec {
	specs := make([]agent.ToolSpec, 0, len(names))
	for _, n := range names {
		t, ok := tools[n]
		if !ok {
			continue
		}
		specs = append(specs, agent.ToolSpec{
			Name:        n,
			Description: t.description,
			Parameters:  json.RawMessage(t.schema),
		})
	}
	return specs
}

// Run runs one tool call. args is the JSON arguments object the model sent.
// Every failure is a Result with IsError true; Run never panics and never
// returns a Go error.
func Run(ctx context.Context, name string, args json.RawMessage, opts Options) (res Result) {
	t, ok := tools[name]
	if !ok {
		return errorf("Unknown tool: %q. Available tools: %s", name, strings.Join(All(), ", "))
	}
	defer func() {
		if p := recover(); p != nil {
			res = errorf("%s: internal error: %v", name, p)
		}
	}()
	if ctx == nil {
		ctx = context.Background()
	}
	if ctx.Err() != nil {
		if name == Bash {
			return errorf("Command aborted")
		}
		return errorf("Operation aborted")
	}
	return t.run(ctx, args, &opts)
}

// errorf builds an error result.
func errorf(format string, a ...any) Result {
	return Result{Content: fmt.Sprintf(format, a...), IsError: true}
}

// decoded is a tool's run on its arguments decoded into A (decodeArgs).
func decoded[A any](tool string, run func(context.Context, *A, *Options) Result) func(context.Context, json.RawMessage, *Options) Result {
	return func(ctx context.Context, raw json.RawMessage, opts *Options) Result {
		var a A
		if r := decodeArgs(tool, raw, &a); r != nil {
			return *r
		}
		return run(ctx, &a, opts)
	}
}

// decodeArgs unmarshals the model's arguments into v (a pointer to a
// struct whose pointer fields are the required parameters). It returns a
// non-nil error result naming the tool when they do not fit.
func decodeArgs(tool string, args json.RawMessage, v any) *Result {
	b := strings.TrimSpace(string(args))
	if b == "" || b == "null" {
		b = "{}"
	}
	if b[0] != '{' {
		return new(errorf("invalid arguments for %s: expected a JSON object, got %s", tool, line.Cut(b, 81)))
	}
	err := json.Unmarshal([]byte(b), v)
	if err == nil {
		rv := reflect.ValueOf(v).Elem()
		for i := range rv.NumField() {
			if f := rv.Field(i); f.Kind() == reflect.Pointer && f.IsNil() {
				name, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("json"), ",")
				return new(missing(tool, name))
			}
		}
		return nil
	}
	// A value of the wrong type (opt's included) names its parameter.
	msg := strings.TrimPrefix(err.Error(), "json: ")
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		msg = fmt.Sprintf("parameter %q must be %s, got %s", te.Field, typeName(te.Type), te.Value)
	}
	return new(errorf("invalid arguments for %s: %s", tool, msg))
}

func missing(tool, param string) Result {
	return errorf("invalid arguments for %s: missing required parameter %q", tool, param)
}

// typeName names the type json wanted (never a pointer: json names the
// type it points to).
func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Float64, reflect.Float32:
		return "a number"
	}
	return "a " + t.Kind().String()
}

// opt is an optional number or boolean parameter. It accepts the JSON
// value, the same quoted (models sometimes quote them) or null; a quoted
// "" is unset (a boolean's v is then false).
type opt[T float64 | bool] struct {
	set bool
	v   T
}

type (
	optNum  = opt[float64]
	optBool = opt[bool]
)

func (o *opt[T]) UnmarshalJSON(b []byte) error {
	*o = opt[T]{}
	s := strings.TrimSpace(string(b))
	if uq, err := strconv.Unquote(s); err == nil {
		s = strings.TrimSpace(uq)
	}
	if s == "null" || s == "" {
		return nil
	}
	var err error
	switch v := any(&o.v).(type) {
	case *float64:
		*v, err = strconv.ParseFloat(s, 64)
	case *bool:
		*v, err = strconv.ParseBool(strings.ToLower(s))
	}
	if err != nil {
		return &json.UnmarshalTypeError{Value: line.Cut(string(b), 41), Type: reflect.TypeFor[T]()}
	}
	o.set = true
	return nil
}

// int returns a number parameter as an int (truncated, within ±2^40), or
// def when unset.
func (o opt[T]) int(def int) int {
	f, _ := any(o.v).(float64)
	if !o.set {
		return def
	}
	return int(max(min(f, 1<<40), -(1 << 40)))
}

// unwrapPathErr drops the operation and path of a *fs.PathError, which the
// message names already.
func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
