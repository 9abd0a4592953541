package policy

import "fmt"

// PathRules are the rules the tool host applies where the file system is
// (docs/spec.md 15.3.2): to the real location of a file tool's path
// argument, every symbolic link resolved, and to each file a grep, find
// or ls walk reaches. The workflow decided the call by its path argument
// as written; the host refuses a path that a deny or ask rule other than
// that one decides (a host cannot ask a person: an asked path is refused
// with the hint to name it, so the workflow asks).
type PathRules struct {
	// Rules are the texts of the rules that may decide a path of the
	// call's tool, in policy order, At their positions in the policy
	// (from 0), up to the first rule without a match.
	Rules []string `json:"rules"`
	At    []int    `json:"at"`
	// Decided is the position of the rule that decided the call by its
	// path argument (-1: none).
	Decided int `json:"decided"`
}

// PathRules returns what the tool host needs to apply p's path rules to
// the paths the call c reaches, d being c's decision; nil when no rule
// could refuse one (a bash call, or no deny or ask rule of c's tool
// before one that decides every path). Only the rules of c's tool go, so
// the tool call's input stays small.
func (p *Policy) PathRules(c Call, d Decision) *PathRules {
	if p == nil || c.Tool == "bash" {
		return nil
	}
	pr := &PathRules{Decided: d.Index}
	refuses := false
	for i, r := range p.rules {
		if !r.appliesTo(c.Tool) || (r.Kind != "" && r.Kind != MatchPath) {
			continue
		}
		if r.Kind == "" && r.Action != Allow && i == d.Index && !refuses {
			return nil // every path is decided at latest here, as the call was
		}
		pr.Rules, pr.At = append(pr.Rules, r.String()), append(pr.At, i)
		refuses = refuses || r.Action != Allow
		if r.Kind == "" {
			break
		}
	}
	if !refuses {
		return nil
	}
	return pr
}

// Refusal returns why the rules refuse the path abs, a real location
// (absolute; a relative glob matches it relative to workspace) that a
// call of tool reaches; "" when they do not.
func (pr *PathRules) Refusal(tool, workspace string) (func(abs string) string, error) {
	p, err := Parse(pr.Rules)
	if err != nil || len(pr.At) != len(p.rules) {
		return nil, fmt.Errorf("the tool call's path rules: %v", err)
	}
	return func(abs string) string {
		d := p.Decide(Call{Tool: tool, Path: abs, Workspace: workspace})
		if d.Index < 0 || d.Action == Allow || pr.At[d.Index] == pr.Decided {
			return ""
		}
		d.Index = pr.At[d.Index]
		if d.Action == Deny {
			return "which the approval policy denies (" + d.Why() + ")"
		}
		return "which the approval policy asks a person for (" + d.Why() + "): name that path so the person is asked"
	}, nil
}
