package policy

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Action is what a rule does with the calls it matches.
type Action string

// Actions.
const (
	Allow Action = "allow"
	Ask   Action = "ask"
	Deny  Action = "deny"
)

// Kinds of a rule's argument match.
const (
	MatchPrefix = "prefix"
	MatchRegex  = "regex"
	MatchPath   = "path"
)

// AnyTool is the tool name of a rule that matches every tool.
const AnyTool = "*"

// MaxRuleBytes bounds one rule's text; MaxRules the rules of a prompt's
// policy, the default policy's included (the prompt's input carries them,
// so history stays bounded): tools.policy holds MaxRules-len(Default).
const (
	MaxRuleBytes = 512
	MaxRules     = 100
)

// Rule is one parsed rule.
type Rule struct {
	Action Action
	// Tool is a tool name or AnyTool.
	Tool string
	// Kind is "" (every call of Tool), MatchPrefix, MatchRegex or
	// MatchPath; Pattern its text.
	Kind    string
	Pattern string
	re      *regexp.Regexp
	// words are a prefix's words as the shell reads them; exact says
	// the pattern ends in a blank (its last word is whole).
	words []string
	exact bool
}

// String is the rule's canonical text (what ParseRule reads back).
func (r Rule) String() string {
	s := string(r.Action) + " " + r.Tool
	if r.Kind != "" {
		s += " " + r.Kind + ":" + r.Pattern
	}
	return s
}

// ParseRule reads one rule: "ACTION TOOL [prefix:TEXT|regex:RE|path:GLOB]".
// Its error names the problem; Parse adds which rule it is.
func ParseRule(text string) (Rule, error) {
	// Leading blanks go; trailing ones stay, for a prefix: that ends in a
	// space ("deny bash prefix:rm " leaves rmdir alone).
	s := strings.TrimLeft(text, " \t")
	if strings.TrimSpace(s) == "" {
		return Rule{}, errors.New("the rule is empty (want ACTION TOOL [prefix:TEXT|regex:RE|path:GLOB])")
	}
	if len(s) > MaxRuleBytes {
		return Rule{}, fmt.Errorf("the rule is %d bytes, more than %d", len(s), MaxRuleBytes)
	}
	action, rest, _ := strings.Cut(s, " ")
	var r Rule
	switch Action(action) {
	case Allow, Ask, Deny:
		r.Action = Action(action)
	default:
		return Rule{}, fmt.Errorf("action %q is not allow, ask or deny", action)
	}
	rest = strings.TrimLeft(rest, " ")
	tool, match, _ := strings.Cut(rest, " ")
	if tool == "" {
		return Rule{}, errors.New("the tool is missing (a tool name or *)")
	}
	if tool != AnyTool && !toolName.MatchString(strings.TrimSuffix(tool, "*")) {
		return Rule{}, fmt.Errorf("tool %q is not a tool name (letters, digits, _ and -), a name ending in * (mcp__github__*) or *", tool)
	}
	r.Tool = tool
	match = strings.TrimLeft(match, " ")
	if match == "" {
		return r, nil
	}
	kind, pattern, ok := strings.Cut(match, ":")
	if !ok || (kind != MatchPrefix && kind != MatchRegex && kind != MatchPath) {
		return Rule{}, fmt.Errorf("match %q does not start with prefix:, regex: or path: (e.g. prefix:go test)", match)
	}
	if pattern == "" {
		return Rule{}, fmt.Errorf("the %s: pattern is empty", kind)
	}
	r.Kind, r.Pattern = kind, pattern
	switch kind {
	case MatchPrefix, MatchRegex:
		if tool != "bash" && tool != AnyTool {
			return Rule{}, fmt.Errorf("%s: matches a bash command, and the tool is %s", kind, tool)
		}
		if kind == MatchPrefix {
			sc := parseScript(pattern, false)
			if sc.plain == nil {
				return Rule{}, fmt.Errorf("the prefix: pattern %q is not a command's words (no ; & | < > $ or backquote)", pattern)
			}
			r.words, r.exact = sc.plain, strings.TrimRight(pattern, " \t") != pattern
		}
		if kind == MatchRegex {
			re, err := regexp.Compile(pattern)
			if err != nil {
				return Rule{}, fmt.Errorf("bad regex: %w", err)
			}
			r.re = re
		}
	case MatchPath:
		if tool == "bash" {
			return Rule{}, errors.New("path: matches a path argument, and bash has none (use prefix: or regex:)")
		}
		if !doublestar.ValidatePattern(pattern) {
			return Rule{}, fmt.Errorf("bad glob %q", pattern)
		}
	}
	return r, nil
}

// toolName is a tool's name: letters, digits, _ and -.
var toolName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
