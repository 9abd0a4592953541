package policy

import (
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/durableagent/durableagent/internal/line"
)

// Default is the policy for a job nobody watches inside the sandbox:
// read-only tools and bash run, writes and edits inside the workspace
// run, anything else (a write outside the workspace, a tool of the
// worker's own) waits for a person.
var Default = []string{
	"allow read",
	"allow grep",
	"allow find",
	"allow ls",
	"allow bash",
	"allow write path:**",
	"allow edit path:**",
	// A task call only starts a sub-agent, whose own calls the policy
	// decides in its own session.
	"allow task",
	"ask *",
}

// Policy is a parsed list of rules, first match wins.
type Policy struct {
	rules []Rule
}

// Parse reads rules. A bad rule's error names it by its number (from 1)
// and text, and says the problem, in one line.
func Parse(rules []string) (*Policy, error) {
	if len(rules) > MaxRules {
		return nil, fmt.Errorf("the policy has %d rules, more than %d (tools.policy at most %d, then the default policy's %d)",
			len(rules), MaxRules, MaxRules-len(Default), len(Default))
	}
	p := &Policy{rules: make([]Rule, 0, len(rules))}
	for i, text := range rules {
		r, err := ParseRule(text)
		if err != nil {
			return nil, fmt.Errorf("tools.policy rule %d %q: %w", i+1, line.Cut(text, 81), err)
		}
		p.rules = append(p.rules, r)
	}
	return p, nil
}

// Compile is the policy of a prompt: an "ask TOOL" rule for each tool of
// require (tools.requireApproval and the worker's floor, any name), then
// rules.
func Compile(require, rules []string) (*Policy, error) {
	p, err := Parse(rules)
	if err != nil {
		return nil, err
	}
	asks := make([]Rule, 0, len(require)+len(p.rules))
	for _, t := range require {
		asks = append(asks, Rule{Action: Ask, Tool: t})
	}
	p.rules = append(asks, p.rules...)
	return p, nil
}

// Call is what a decision looks at.
type Call struct {
	Tool string
	// Command is a bash call's command; Path a file tool's path argument
	// (relative to Workspace or absolute). Either may be empty.
	Command string
	Path    string
	// Cut says Command or Path is only the start of the argument (it was
	// too long to carry): allow rules with a match do not match it.
	Cut       bool
	Workspace string
}

// Decision is the policy's answer for one call.
type Decision struct {
	Action Action
	// Index is the matching rule's position in the policy, from 0; -1
	// when none matched (the call is allowed).
	Index int
	// Rule is the matching rule's text ("" when none matched).
	Rule string
	// Blind says the rule matched a call it could not read: a command
	// that cannot be parsed, or an argument cut to fit history.
	Blind bool
}

// Why says which rule decided, for events, state and a denied call's
// result.
func (d Decision) Why() string {
	if d.Index < 0 {
		return "no rule matched"
	}
	why := fmt.Sprintf("rule %d %q", d.Index+1, d.Rule)
	if d.Blind {
		why += ", which matches every command too long (over 1024 bytes) or too odd to parse"
	}
	return why
}

// Decide returns the decision of the first rule that matches c.
func (p *Policy) Decide(c Call) Decision {
	if p != nil {
		var sc *script
		if c.Tool == "bash" {
			sc = parseScript(c.Command, c.Cut)
		}
		for i, r := range p.rules {
			if r.matches(c, sc) {
				blind := r.Kind != "" && (c.Cut || sc != nil && sc.opaque)
				return Decision{Action: r.Action, Index: i, Rule: r.String(), Blind: blind}
			}
		}
	}
	return Decision{Action: Allow, Index: -1}
}

// walkers are the tools that walk the tree below their path: without a
// path argument they walk the workspace.
var walkers = set("grep", "find", "ls")

// appliesTo reports whether r may decide a call of tool: a rule of the
// tool, of tools whose names start as its name ending in "*" does
// (mcp__github__*), or of any tool, and a read rule's path for grep,
// which reads the files it reaches (an ask or deny rule: allow stays
// narrow).
func (r Rule) appliesTo(tool string) bool {
	return r.Tool == AnyTool || r.Tool == tool ||
		strings.HasSuffix(r.Tool, "*") && strings.HasPrefix(tool, strings.TrimSuffix(r.Tool, "*")) ||
		r.Tool == "read" && tool == "grep" && r.Kind == MatchPath && r.Action != Allow
}

// matches reports whether r matches c; sc is c's parsed command (bash).
// An allow rule with a match is narrow, an ask or deny rule wide (doc.go).
// A path rule sees the path argument as written; the tool host applies
// the path rules to what it resolves to and walks (PathRules).
func (r Rule) matches(c Call, sc *script) bool {
	narrow := r.Action == Allow
	if !r.appliesTo(c.Tool) {
		return false
	}
	switch r.Kind {
	case "":
		return true
	case MatchPrefix:
		return sc != nil && sc.matchPrefix(r.words, r.exact, narrow)
	case MatchRegex:
		return sc != nil && sc.matchRegex(r.re, narrow)
	}
	p := c.Path
	if p == "" && !narrow && walkers[c.Tool] {
		p = "." // a walk of the workspace
	}
	if p == "" || (c.Cut && narrow) {
		return false
	}
	return c.Cut || pathMatches(r.Pattern, p, c.Workspace)
}

// pathMatches matches an absolute glob against the absolute path, a
// relative one against the path relative to the workspace (never a path
// outside it).
func pathMatches(glob, p, workspace string) bool {
	abs := p
	if !path.IsAbs(abs) {
		if workspace == "" {
			return false
		}
		abs = path.Join(workspace, p)
	}
	abs = path.Clean(abs)
	if !path.IsAbs(glob) {
		ws := strings.TrimSuffix(path.Clean(workspace), "/")
		switch {
		case workspace == "" || (abs != ws && !strings.HasPrefix(abs, ws+"/")):
			return false
		case abs == ws:
			abs = "."
		default:
			abs = strings.TrimPrefix(abs, ws+"/")
		}
	}
	ok, _ := doublestar.Match(glob, abs)
	return ok
}
