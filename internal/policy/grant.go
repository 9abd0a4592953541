package policy

import (
	"path"

	"github.com/durableagent/durableagent/internal/line"
)

// Grant is an "allow for this session" given when a person approved an
// asked call: it allows later calls the same ask rule matches, of the
// same tool, and for bash either the same program or, for a command that
// runs other programs (a shell, an interpreter given code, a wrapper such
// as env or xargs, find -exec) that exact command only; a command that is
// not one plain command (chained, redirected) gets none. It is recorded in the workflow's state and beside the
// session.
type Grant struct {
	Tool string `json:"tool"`
	Rule string `json:"rule"`
	// Program is a bash command's program, its first word.
	Program string `json:"program,omitempty"`
	// Command is the whole bash command when only it is granted.
	Command string `json:"command,omitempty"`
}

// GrantFor is the grant of approving c, which d asked for; ok is false
// when d is not an ask by a rule, c's argument was cut, or c is a bash
// command that is not one plain command.
func GrantFor(c Call, d Decision) (Grant, bool) {
	if d.Action != Ask || d.Index < 0 || c.Cut {
		return Grant{}, false
	}
	g := Grant{Tool: c.Tool, Rule: d.Rule}
	if c.Tool == "bash" {
		sc := parseScript(c.Command, false)
		switch {
		case sc.plain == nil: // chained, redirected, …: no grant
			return Grant{}, false
		case runsOthers(sc.plain) != "":
			g.Command = c.Command
		default:
			g.Program = sc.plain[0]
		}
	}
	return g, true
}

// Covers reports whether g allows c, which d asks for. A program grant
// never covers a command that runs other programs, whatever its program.
func (g Grant) Covers(c Call, d Decision) bool {
	if d.Action != Ask || g.Tool != c.Tool || g.Rule != d.Rule || c.Cut {
		return false
	}
	if c.Tool != "bash" {
		return true
	}
	if g.Command != "" {
		return c.Command == g.Command
	}
	sc := parseScript(c.Command, false)
	return g.Program != "" && sc.plain != nil && sc.plain[0] == g.Program && runsOthers(sc.plain) == ""
}

// String says what the grant allows, for events and state.
func (g Grant) String() string {
	s := "allowed for this session (" + g.Tool
	switch {
	case g.Command != "":
		s += " " + line.Cut(g.Command, 81) + " exactly"
	case g.Program != "":
		s += " " + g.Program + " …"
	}
	return s + " under " + g.Rule + ")"
}

// Scope is what approving the call for the session would allow, shown
// where a person is asked (the approval request's sessionScope).
func (g Grant) Scope() string {
	if g.Command == "" {
		if g.Program != "" {
			return g.Tool + " " + path.Base(g.Program) + " … under " + g.Rule
		}
		return g.Tool + " under " + g.Rule
	}
	return "this exact command only (" + runsOthers(parseScript(g.Command, false).plain) + ")"
}
