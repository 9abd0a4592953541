package tools

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// The task tool checks its arguments in one line each, and a sub-agent's
// tools only narrow the caller's (issue 25: sub-agents).
func TestParseTask(t *testing.T) {
	mine := []string{Read, Grep, Bash, "mcp__fs__*"}
	for _, tc := range []struct {
		name, args string
		want       TaskCall
		err        string
	}{
		{name: "defaults to the caller's tools", args: `{"description":"count files","prompt":"count the Go files"}`,
			want: TaskCall{Description: "count files", Prompt: "count the Go files", Tools: mine}},
		{name: "narrowed tools, worktree", args: `{"description":"d","prompt":"p","tools":["read","read","grep"],"worktree":"true"}`,
			want: TaskCall{Description: "d", Prompt: "p", Tools: []string{Read, Grep}, Worktree: true}},
		{name: "no tools", args: `{"description":"d","prompt":"p","tools":[]}`,
			want: TaskCall{Description: "d", Prompt: "p", Tools: []string{}}},
		{name: "missing prompt", args: `{"description":"d"}`, err: `invalid arguments for task: missing required parameter "prompt"`},
		{name: "blank description", args: `{"description":"  ","prompt":"p"}`, err: `invalid arguments for task: missing required parameter "description"`},
		{name: "tool not the caller's", args: `{"description":"d","prompt":"p","tools":["write"]}`,
			err: `invalid arguments for task: tool "write" is not one of yours (read, grep, bash, mcp__fs__*)`},
		{name: "an MCP tool of the caller's glob", args: `{"description":"d","prompt":"p","tools":["mcp__fs__read_file"]}`,
			want: TaskCall{Description: "d", Prompt: "p", Tools: []string{"mcp__fs__read_file"}}},
		{name: "an MCP tool of another server", args: `{"description":"d","prompt":"p","tools":["mcp__gh__get"]}`,
			err: `invalid arguments for task: tool "mcp__gh__get" is not one of yours (read, grep, bash, mcp__fs__*)`},
		{name: "tools not a list", args: `{"description":"d","prompt":"p","tools":"read"}`, err: `invalid arguments for task: parameter "tools" must be a slice`},
		{name: "not an object", args: `["p"]`, err: `invalid arguments for task: expected a JSON object`},
		{name: "prompt too long", args: `{"description":"d","prompt":"` + strings.Repeat("x", MaxTaskPrompt+1) + `"}`,
			err: `invalid arguments for task: prompt is 262145 bytes, at most 262144`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTask(json.RawMessage(tc.args), mine)
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("ParseTask(%s) = %+v, %v; want the one-line error %q", tc.args, got, err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseTask(%s) = %+v, %v; want %+v", tc.args, got, err, tc.want)
			}
		})
	}
}

// task is a sub-agent tool whose calls run concurrently with each
// other, once each; it is offered to the model only when enabled.
func TestTaskSpec(t *testing.T) {
	s := SpecOf(Task)
	if s.Kind != KindSubAgent || !s.Concurrent || s.Attempts != 1 || s.ReadOnly {
		t.Fatalf("SpecOf(task) = %+v", s)
	}
	if SpecOf(Bash).Concurrent || SpecOf(Read).Concurrent {
		t.Fatal("only task calls are concurrent with each other")
	}
	if specs := Specs(All()); len(specs) != 7 {
		t.Fatalf("the seven tools' specs: %d, want task left out unless named", len(specs))
	}
	specs := Specs([]string{Read, Task})
	if len(specs) != 2 || specs[1].Name != Task || !strings.Contains(string(specs[1].Parameters), `"required":["description","prompt"]`) {
		t.Fatalf("Specs(read, task) = %+v", specs)
	}
	if r := Run(context.Background(), Task, json.RawMessage(`{}`), Options{}); !r.IsError {
		t.Fatalf("task run as an activity: %+v, want an error result", r)
	}
}
