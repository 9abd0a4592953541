package policy

import (
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
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
		return nil, fmt.Errorf("tools.policy has %d rules, more than %d", len(rules), MaxRules)
	}
	p := &Policy{rules: make([]Rule, 0, len(rules))}
	for i, text := range rules {
		r, err := ParseRule(text)
		if err != nil {
			return nil, fmt.Errorf("tools.policy rule %d %q: %w", i+1, shorten(text), err)
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
}

// Why says which rule decided, for events, state and a denied call's
// result.
func (d Decision) Why() string {
	if d.Index < 0 {
		return "no rule matched"
	}
	return fmt.Sprintf("rule %d %q", d.Index+1, d.Rule)
}

// Decide returns the decision of the first rule that matches c.
func (p *Policy) Decide(c Call) Decision {
	if p != nil {
		for i, r := range p.rules {
			if r.matches(c) {
				return Decision{Action: r.Action, Index: i, Rule: r.String()}
			}
		}
	}
	return Decision{Action: Allow, Index: -1}
}

// shellControl are the characters that chain or redirect commands.
const shellControl = ";&|`<>\n\r"

func (r Rule) matches(c Call) bool {
	if r.Tool != AnyTool && r.Tool != c.Tool {
		return false
	}
	if r.Kind == "" {
		return true
	}
	if c.Cut && r.Action == Allow {
		return false
	}
	switch r.Kind {
	case MatchPrefix:
		if c.Tool != "bash" {
			return false
		}
		cmd := strings.TrimLeft(c.Command, " \t")
		if r.Action == Allow && (strings.ContainsAny(cmd, shellControl) || strings.Contains(cmd, "$(")) {
			return false
		}
		return strings.HasPrefix(cmd, r.Pattern)
	case MatchRegex:
		return c.Tool == "bash" && r.re.MatchString(c.Command)
	case MatchPath:
		return c.Path != "" && pathMatches(r.Pattern, c.Path, c.Workspace)
	}
	return false
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
	if path.IsAbs(glob) {
		ok, _ := doublestar.Match(glob, abs)
		return ok
	}
	if workspace == "" {
		return false
	}
	ws := path.Clean(workspace)
	var rel string
	switch {
	case abs == ws:
		rel = "."
	case strings.HasPrefix(abs, strings.TrimSuffix(ws, "/")+"/"):
		rel = strings.TrimPrefix(abs, strings.TrimSuffix(ws, "/")+"/")
	default:
		return false
	}
	ok, _ := doublestar.Match(glob, rel)
	return ok
}

func shorten(s string) string {
	if len(s) <= 80 {
		return s
	}
	return s[:80] + "…"
}
