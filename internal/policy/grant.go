package policy

import "strings"

// Grant is an "allow for this session" given when a person approved an
// asked call: it allows later calls the same ask rule matches, of the
// same tool, and for bash with the same first word (the program). It is
// recorded in the workflow's state and beside the session.
type Grant struct {
	Tool string `json:"tool"`
	Rule string `json:"rule"`
	// Program is a bash command's first word ("" for other tools).
	Program string `json:"program,omitempty"`
}

// GrantFor is the grant of approving c, which d asked for; ok is false
// when d is not an ask by a rule.
func GrantFor(c Call, d Decision) (Grant, bool) {
	if d.Action != Ask || d.Index < 0 {
		return Grant{}, false
	}
	g := Grant{Tool: c.Tool, Rule: d.Rule}
	if c.Tool == "bash" {
		g.Program = program(c.Command)
		if g.Program == "" {
			return Grant{}, false
		}
	}
	return g, true
}

// Covers reports whether g allows c, which d asks for.
func (g Grant) Covers(c Call, d Decision) bool {
	if d.Action != Ask || g.Tool != c.Tool || g.Rule != d.Rule {
		return false
	}
	return c.Tool != "bash" || (!c.Cut && g.Program == program(c.Command))
}

// String says what the grant allows, for events and state.
func (g Grant) String() string {
	s := "allowed for this session (" + g.Tool
	if g.Program != "" {
		s += " " + g.Program + " …"
	}
	return s + " under " + g.Rule + ")"
}

// program is the first word of a command, when the command is a plain
// one (no shell control character, so the grant cannot be chained on).
func program(cmd string) string {
	cmd = strings.TrimLeft(cmd, " \t")
	if strings.ContainsAny(cmd, shellControl) || strings.Contains(cmd, "$(") {
		return ""
	}
	w, _, _ := strings.Cut(cmd, " ")
	return w
}
