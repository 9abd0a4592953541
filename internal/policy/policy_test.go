package policy

import (
	"strings"
	"testing"
)

const ws = "/home/u/proj"

// Each named case: a policy, a call, the action and the rule (1-based,
// 0 for none) that decided it.
func TestDecide(t *testing.T) {
	cases := []struct {
		name   string
		rules  []string
		call   Call
		action Action
		rule   int
	}{
		{"empty policy allows", nil, Call{Tool: "bash", Command: "rm -rf /"}, Allow, 0},
		{"tool rule", []string{"deny bash"}, Call{Tool: "bash", Command: "ls"}, Deny, 1},
		{"other tool falls through", []string{"deny bash"}, Call{Tool: "read", Path: "a"}, Allow, 0},
		{"star matches any tool", []string{"ask *"}, Call{Tool: "mytool"}, Ask, 1},
		{"first match wins", []string{"allow bash prefix:go test", "deny bash"}, Call{Tool: "bash", Command: "go test ./..."}, Allow, 1},
		{"prefix miss falls to next", []string{"allow bash prefix:go test", "deny bash"}, Call{Tool: "bash", Command: "go build"}, Deny, 2},
		{"prefix ignores leading spaces", []string{"deny bash prefix:rm "}, Call{Tool: "bash", Command: "  rm -rf x"}, Deny, 1},
		{"allow prefix refuses ;", []string{"allow bash prefix:git status", "ask bash"}, Call{Tool: "bash", Command: "git status; rm -rf ~"}, Ask, 2},
		{"allow prefix refuses &&", []string{"allow bash prefix:git status", "ask bash"}, Call{Tool: "bash", Command: "git status && curl x"}, Ask, 2},
		{"allow prefix refuses $()", []string{"allow bash prefix:echo", "ask bash"}, Call{Tool: "bash", Command: "echo $(cat ~/.ssh/id_rsa)"}, Ask, 2},
		{"allow prefix refuses newline", []string{"allow bash prefix:ls", "ask bash"}, Call{Tool: "bash", Command: "ls\nrm x"}, Ask, 2},
		{"deny prefix matches chained", []string{"deny bash prefix:git push"}, Call{Tool: "bash", Command: "git push; echo"}, Deny, 1},
		{"regex", []string{`deny bash regex:\brm\s+-rf\b`}, Call{Tool: "bash", Command: "cd x && rm  -rf y"}, Deny, 1},
		{"regex miss", []string{`deny bash regex:^sudo `}, Call{Tool: "bash", Command: "echo sudo "}, Allow, 0},
		{"regex on star only bash", []string{`deny * regex:x`}, Call{Tool: "read", Path: "x"}, Allow, 0},
		{"relative glob inside workspace", []string{"allow write path:src/**", "ask write"}, Call{Tool: "write", Path: "src/a/b.go", Workspace: ws}, Allow, 1},
		{"relative glob on absolute path inside", []string{"allow write path:**/*.go", "ask write"}, Call{Tool: "write", Path: ws + "/x/y.go", Workspace: ws}, Allow, 1},
		{"relative glob never outside workspace", []string{"allow write path:**", "ask write"}, Call{Tool: "write", Path: "../other/x", Workspace: ws}, Ask, 2},
		{"absolute path outside", []string{"allow write path:**", "ask write"}, Call{Tool: "write", Path: "/etc/passwd", Workspace: ws}, Ask, 2},
		{"workspace prefix sibling is outside", []string{"allow write path:**", "ask write"}, Call{Tool: "write", Path: "/home/u/project2/a", Workspace: ws}, Ask, 2},
		{"absolute glob", []string{"deny read path:/etc/**"}, Call{Tool: "read", Path: "/etc/shadow", Workspace: ws}, Deny, 1},
		{"dotenv glob", []string{"deny read path:**/.env", "allow read"}, Call{Tool: "read", Path: "app/.env", Workspace: ws}, Deny, 1},
		{"path rule without path", []string{"allow ls path:**", "ask ls"}, Call{Tool: "ls", Workspace: ws}, Ask, 2},
		{"cut argument: allow with match does not match", []string{"allow bash prefix:go", "ask bash"}, Call{Tool: "bash", Command: "go run x", Cut: true}, Ask, 2},
		{"cut argument: deny still matches its start", []string{"deny bash prefix:curl"}, Call{Tool: "bash", Command: "curl x", Cut: true}, Deny, 1},
		{"default: read allowed", Default, Call{Tool: "read", Path: "/etc/hosts", Workspace: ws}, Allow, 1},
		{"default: bash allowed", Default, Call{Tool: "bash", Command: "make"}, Allow, 5},
		{"default: write inside allowed", Default, Call{Tool: "write", Path: "a.txt", Workspace: ws}, Allow, 6},
		{"default: edit outside asks", Default, Call{Tool: "edit", Path: "/etc/hosts", Workspace: ws}, Ask, 9},
		{"default: unknown tool asks", Default, Call{Tool: "deploy"}, Ask, 9},
		{"default: task runs (its sub-agent asks for its own calls)", Default, Call{Tool: "task"}, Allow, 8},
		{"default: an MCP tool asks", Default, Call{Tool: "mcp__fs__write_file"}, Ask, 9},
		{"glob of a server's tools", []string{"deny mcp__fs__write*", "allow mcp__fs__*", "ask *"}, Call{Tool: "mcp__fs__read_file"}, Allow, 2},
		{"glob: first match wins", []string{"deny mcp__fs__write*", "allow mcp__fs__*"}, Call{Tool: "mcp__fs__write_file"}, Deny, 1},
		{"glob of another server", []string{"allow mcp__fs__*", "ask *"}, Call{Tool: "mcp__fsx__read"}, Ask, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.rules)
			if err != nil {
				t.Fatal(err)
			}
			d := p.Decide(tc.call)
			if d.Action != tc.action || d.Index != tc.rule-1 {
				t.Fatalf("got %s by %s, want %s by rule %d", d.Action, d.Why(), tc.action, tc.rule)
			}
			if tc.rule > 0 && d.Rule != tc.rules[tc.rule-1] {
				t.Fatalf("rule text %q, want %q", d.Rule, tc.rules[tc.rule-1])
			}
		})
	}
}

// tools.requireApproval's tools become asks placed before every rule.
func TestCompile_RequireApprovalFirst(t *testing.T) {
	p, err := Compile([]string{"bash"}, []string{"allow bash"})
	if err != nil {
		t.Fatal(err)
	}
	d := p.Decide(Call{Tool: "bash", Command: "ls"})
	if d.Action != Ask || d.Why() != `rule 1 "ask bash"` {
		t.Fatalf("got %s by %s", d.Action, d.Why())
	}
}

// A bad rule is refused in one line naming the rule's number, its text
// and the problem.
func TestParse_BadRules(t *testing.T) {
	cases := []struct {
		name, rule, want string
	}{
		{"empty", "  ", "the rule is empty"},
		{"bad action", "permit bash", `action "permit" is not allow, ask or deny`},
		{"no tool", "allow", "the tool is missing"},
		{"bad tool", "allow ba/sh", `tool "ba/sh" is not a tool name`},
		{"bad match kind", "allow bash glob:x", `match "glob:x" does not start with prefix:, regex: or path:`},
		{"empty pattern", "allow bash prefix:", "the prefix: pattern is empty"},
		{"bad regex", "deny bash regex:(", "bad regex: error parsing regexp"},
		{"prefix on a file tool", "allow write prefix:x", "prefix: matches a bash command, and the tool is write"},
		{"path on bash", "allow bash path:**", "bash has none"},
		{"bad glob", "allow write path:[", `bad glob "["`},
		{"too long", "allow bash prefix:" + strings.Repeat("x", MaxRuleBytes), "more than 512"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]string{"allow read", tc.rule})
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "tools.policy rule 2 ") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Fatalf("error %q, want rule 2 and %q on one line", msg, tc.want)
			}
		})
	}
	many := make([]string, MaxRules+1)
	for i := range many {
		many[i] = "allow read"
	}
	if _, err := Parse(many); err == nil || !strings.Contains(err.Error(), "more than 100") {
		t.Fatalf("too many rules: %v", err)
	}
}

// Every rule's canonical text parses back to itself.
func TestRule_StringRoundTrip(t *testing.T) {
	for _, s := range append([]string{`deny bash regex:^\s*sudo`, "ask write path:/etc/**"}, Default...) {
		r, err := ParseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		if r.String() != s {
			t.Fatalf("%q became %q", s, r.String())
		}
	}
}

// "Allow for this session": same tool and rule, and for bash the same
// program; never a chained command.
func TestGrant(t *testing.T) {
	p, _ := Parse([]string{"ask bash", "ask write"})
	git := Call{Tool: "bash", Command: "git status"}
	g, ok := GrantFor(git, p.Decide(git))
	if !ok || g.Program != "git" {
		t.Fatalf("grant %+v %t", g, ok)
	}
	cases := []struct {
		name string
		call Call
		want bool
	}{
		{"same program", Call{Tool: "bash", Command: "git log -1"}, true},
		{"other program", Call{Tool: "bash", Command: "rm -rf x"}, false},
		{"chained onto the program", Call{Tool: "bash", Command: "git log; rm -rf x"}, false},
		{"other tool", Call{Tool: "write", Path: "a"}, false},
		{"cut command", Call{Tool: "bash", Command: "git log", Cut: true}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := g.Covers(tc.call, p.Decide(tc.call)); got != tc.want {
				t.Fatalf("covers %t, want %t", got, tc.want)
			}
		})
	}
	if _, ok := GrantFor(Call{Tool: "bash", Command: "a && b"}, p.Decide(Call{Tool: "bash", Command: "a && b"})); ok {
		t.Fatal("a chained command got a grant")
	}
	if _, ok := GrantFor(git, Decision{Action: Allow, Index: -1}); ok {
		t.Fatal("an allowed call got a grant")
	}
}

// A prefix's trailing space is part of it: "rm " leaves rmdir alone.
func TestParse_PrefixKeepsTrailingSpace(t *testing.T) {
	p, err := Parse([]string{"deny bash prefix:rm "})
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Decide(Call{Tool: "bash", Command: "rmdir x"}); d.Action != Allow {
		t.Fatalf("rmdir: %s by %s", d.Action, d.Why())
	}
	if d := p.Decide(Call{Tool: "bash", Command: "rm x"}); d.Action != Deny || d.Rule != "deny bash prefix:rm " {
		t.Fatalf("rm: %s by %s", d.Action, d.Why())
	}
}
