package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Task is the tool that delegates a piece of work to a sub-agent: a
// session of its own (header parentSession) whose prompt runs as a child
// workflow of the caller's, with its own agent loop, retries, compaction
// and events. It is not one of the seven tools of All: tools.enabled must
// name it.
const Task = "task"

// Bounds of a task call's arguments: the prompt travels in the child's
// workflow input, which Temporal caps at 2 MiB.
const (
	MaxTaskDescription = 200
	MaxTaskPrompt      = 256 << 10
)

var taskTool = toolDef{
	description: "Delegate a self-contained piece of work to a sub-agent, which runs in a session of its own with its own tools and context " +
		"and answers with its final message (plus an account of its turns, tool calls, files changed and usage). " +
		"Several task calls in one answer run at the same time; give each a complete prompt, since the sub-agent does not see this conversation.",
	schema: `{"type":"object","properties":{` +
		`"description":{"type":"string","description":"A short (3-10 word) description of the task"},` +
		`"prompt":{"type":"string","description":"The complete instructions for the sub-agent: what to do and what to report back"},` +
		`"tools":{"type":"array","items":{"type":"string"},"description":"Tools the sub-agent may call, a subset of yours (default: all of yours)"},` +
		`"worktree":{"type":"boolean","description":"Run the sub-agent in a git worktree of its own, on a branch made from your workspace's (default: false, your workspace)"}},` +
		`"required":["description","prompt"]}`,
	// One attempt: a sub-agent is never started twice (its workflow id
	// derives from the call, so a replay finds the first).
	spec: Spec{Attempts: 1, Timeout: DefaultTimeout, Kind: KindSubAgent, Concurrent: true},
	run: func(context.Context, json.RawMessage, *Options) Result {
		return errorf("%s runs as a sub-agent workflow, not as a tool activity; this worker's Prompt workflow does not dispatch it", Task)
	},
}

// TaskCall is a task call's arguments, checked: the sub-agent's prompt,
// its tools and whether it gets a worktree.
type TaskCall struct {
	Description string   `json:"description"`
	Prompt      string   `json:"prompt"`
	Tools       []string `json:"tools"`
	Worktree    bool     `json:"worktree,omitempty"`
}

// ParseTask checks a task call's arguments against the caller's tools
// (enabled): tools may only narrow them. A sub-agent gets the caller's
// tools when the call names none. The error is one line naming the
// problem, for the call's error result.
func ParseTask(args json.RawMessage, enabled []string) (TaskCall, error) {
	var a struct {
		Description string   `json:"description"`
		Prompt      string   `json:"prompt"`
		Tools       []string `json:"tools"`
		Worktree    optBool  `json:"worktree"`
	}
	if r := decodeArgs(Task, args, &a); r != nil {
		return TaskCall{}, errors.New(r.Content)
	}
	c := TaskCall{Description: strings.TrimSpace(a.Description), Prompt: a.Prompt, Worktree: a.Worktree.v}
	switch {
	case c.Description == "":
		return TaskCall{}, errors.New(missing(Task, "description").Content)
	case strings.TrimSpace(c.Prompt) == "":
		return TaskCall{}, errors.New(missing(Task, "prompt").Content)
	case len(c.Prompt) > MaxTaskPrompt:
		return TaskCall{}, fmt.Errorf("invalid arguments for %s: prompt is %d bytes, at most %d", Task, len(c.Prompt), MaxTaskPrompt)
	}
	if r := []rune(c.Description); len(r) > MaxTaskDescription {
		c.Description = string(r[:MaxTaskDescription])
	}
	if a.Tools == nil {
		c.Tools = slices.Clone(enabled)
		return c, nil
	}
	c.Tools = []string{}
	for _, n := range a.Tools {
		if !Enabled(enabled, n) {
			return TaskCall{}, fmt.Errorf("invalid arguments for %s: tool %q is not one of yours (%s)", Task, n, strings.Join(enabled, ", "))
		}
		if !slices.Contains(c.Tools, n) {
			c.Tools = append(c.Tools, n)
		}
	}
	return c, nil
}
