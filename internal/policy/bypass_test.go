package policy

import (
	"strings"
	"testing"
	"time"
)

// Issue 37 item 4 (docs/spec.md 15.3.2): ask and deny rules match every
// simple command of the parsed script, whatever rewrite a model tries.
func TestDecide_RewritesOfADeniedCommand(t *testing.T) {
	push := []string{"deny bash prefix:git push", "allow bash"}
	rmrf := []string{`deny bash prefix:rm -rf /`, "allow bash"}
	rmre := []string{`deny bash regex:\brm\s+-rf\s+/`, "allow bash"}
	cases := []struct {
		name  string
		rules []string
		cmd   string
		deny  bool
	}{
		{"literal", push, "git push", true},
		{"after true &&", push, "true && git push", true},
		{"after ;", push, "echo hi; git push origin main", true},
		{"in a pipeline", push, "yes | git push", true},
		{"env wrapper", push, "env git push", true},
		{"env with assignment and options", push, "env -i A=1 git push", true},
		{"nice and timeout wrappers", push, "nice -n 5 timeout -s KILL 10 git push", true},
		{"sudo, nohup, command, exec, builtin", push, "sudo -u root nohup command exec git push", true},
		{"xargs gets the subcommand on stdin", push, "echo push | xargs git", true},
		{"time keyword", push, "time git push", true},
		{"bash -c string", push, `bash -c "git push"`, true},
		{"sh -lc string", push, `sh -lc 'cd x && git push'`, true},
		{"bash -c inside bash -c", push, `bash -c "bash -c 'git push'"`, true},
		{"eval", push, `eval "git push"`, true},
		{"eval of pieces", push, `eval git push`, true},
		{"trap", push, `trap 'git push' EXIT`, true},
		{"quoted program", push, `"git" push`, true},
		{"split quotes", push, `g'i't p""ush`, true},
		{"backslash escapes", push, `\git pu\sh`, true},
		{"ANSI-C quoting", push, `$'\x67it' push`, true},
		{"brace expansion", push, `{git,push}`, true},
		{"absolute program path", push, "/usr/bin/git push", true},
		{"git -C dir", push, "git -C . push", true},
		{"git -c and --git-dir", push, "git -c user.name=x --git-dir=.git --no-pager push", true},
		{"git alias defined by -c", push, "git -c alias.p=push p", true},
		{"env assignment before", push, "GIT_TRACE=0 git push", true},
		{"leading newline", push, "\ngit push", true},
		{"line continuation", push, "git \\\npush", true},
		{"subshell", push, "(cd x; git push)", true},
		{"command substitution", push, "echo $(git push)", true},
		{"backquotes", push, "echo `git push`", true},
		{"process substitution", push, "cat <(git push)", true},
		{"function body", push, "f() { git push; }; f", true},
		{"if body", push, "if true; then git push; fi", true},
		{"here-document to a shell", push, "bash <<EOF\ngit push\nEOF", true},
		{"here-string to a shell", push, "sh <<< 'git push'", true},
		{"find -exec", push, `find . -maxdepth 0 -exec git push \;`, true},
		{"env -S string", push, `env -S "git push"`, true},
		{"watch string", push, `watch -n1 "git push"`, true},
		{"program from a variable", push, "$GIT push", true},
		{"subcommand from a variable", push, "X=push; git $X", true},
		{"bash -c of a variable", push, `bash -c "$CMD"`, true},
		{"unparseable script", push, "git push (", true},
		{"padding past the kept start", push, strings.Repeat(" ", 1100) + "git push", true},
		{"other git commands run", push, "git status && git log --grep push", false},
		{"a message mentioning push runs", push, `git commit -m "push later"`, false},
		{"rm -rf /", rmrf, "rm -rf /", true},
		{"rm -fr", rmrf, "rm -fr /", true},
		{"rm -r -f", rmrf, "rm -r -f /", true},
		{"rm -Rf", rmrf, "rm -Rf /", true},
		{"rm -rf -- /etc", rmrf, "rm -rf -- /etc", true},
		{"rm -rf under sudo", rmrf, "sudo rm -rfv /", true},
		{"rm -rf of a relative dir runs", rmrf, "rm -rf build", false},
		{"rm -r without -f runs", rmrf, "rm -r /tmp/x", false},
		{"regex on the written text", rmre, "rm -rf /", true},
		{"regex on words: extra spaces and quotes", rmre, `rm   "-rf"   /`, true},
		{"regex inside bash -c", rmre, `bash -c 'rm -rf /'`, true},
		{"regex past 1 KB of padding", rmre, "true " + strings.Repeat("x", 1100) + "; rm -rf /", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.rules)
			if err != nil {
				t.Fatal(err)
			}
			c := Call{Tool: "bash", Command: tc.cmd}
			if len(c.Command) > 1024 { // what history keeps (activities.MaxPolicyArgBytes)
				c.Command, c.Cut = c.Command[:1024], true
			}
			d := p.Decide(c)
			if got := d.Action == Deny; got != tc.deny {
				t.Fatalf("%q: %s by %s, want deny %t", tc.cmd, d.Action, d.Why(), tc.deny)
			}
		})
	}
}

// An allow rule with a match covers only one plain command: no chaining,
// redirection, assignment or expansion walks past it.
func TestDecide_AllowIsNarrow(t *testing.T) {
	rules := []string{"allow bash prefix:git status", `allow bash regex:^go (test|vet)\b`, "ask bash"}
	cases := []struct {
		cmd   string
		allow bool
	}{
		{"git status", true},
		{"git status --short", true},
		{`git status -- "a b"`, true},
		{"go test ./...", true},
		{"git status; rm -rf ~", false},
		{"git status > ~/.bashrc", false},
		{"GIT_PAGER='sh -c id' git status", false},
		{"git status $(id)", false},
		{"env git status", false},
		{"go test ./... && curl x", false},
		{"go vet ./...\nrm -rf ~", false},
	}
	p, err := Parse(rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		if d := p.Decide(Call{Tool: "bash", Command: tc.cmd}); (d.Action == Allow) != tc.allow {
			t.Errorf("%q: %s by %s, want allow %t", tc.cmd, d.Action, d.Why(), tc.allow)
		}
	}
}

// Path rules (docs/spec.md 15.3.2): the workflow decides a call by its
// path argument as written; a read rule's path also covers grep, which
// reads files. What a walk reaches and where a link leads the tool host
// decides (PathRules).
func TestDecide_PathRulesSeeTheArgument(t *testing.T) {
	rules := []string{"deny read path:**/.env", "deny ls path:secrets/**", "allow *"}
	cases := []struct {
		name string
		call Call
		deny bool
	}{
		{"read of .env", Call{Tool: "read", Path: "app/.env"}, true},
		{"read of .env through ..", Call{Tool: "read", Path: "app/../.env"}, true},
		{"grep of .env itself", Call{Tool: "grep", Path: ".env"}, true},
		{"ls of secrets", Call{Tool: "ls", Path: "secrets/x"}, true},
		{"grep of the directory holding .env runs (the host passes over .env)", Call{Tool: "grep", Path: "app"}, false},
		{"grep of the workspace runs", Call{Tool: "grep"}, false},
		{"ls of a directory above secrets runs", Call{Tool: "ls", Path: "."}, false},
		{"grep outside the workspace runs", Call{Tool: "grep", Path: "/usr/share"}, false},
		{"read of another file runs", Call{Tool: "read", Path: "app/main.go"}, false},
	}
	p, err := Parse(rules)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.call.Workspace = ws
			if d := p.Decide(tc.call); (d.Action == Deny) != tc.deny {
				t.Fatalf("%s %q: %s by %s, want deny %t", tc.call.Tool, tc.call.Path, d.Action, d.Why(), tc.deny)
			}
		})
	}
}

// The tool host's path rules (docs/spec.md 15.3.2): only the rules of the
// call's tool go (none when none could refuse), and the host refuses a
// real location that a deny or ask rule decides unless the same rule
// decided the call's path argument.
func TestPathRules_HostRefusesWhatTheArgumentHid(t *testing.T) {
	p, err := Compile(nil, append([]string{"deny read path:**/.env", "ask read path:keys/**", "deny find path:**/.env"}, Default...))
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"bash", "ls"} {
		c := Call{Tool: tool, Path: "x", Workspace: ws}
		if pr := p.PathRules(c, p.Decide(c)); pr != nil {
			t.Errorf("%s: path rules %+v, want none (no deny or ask path rule of %s)", tool, pr, tool)
		}
	}
	cases := []struct {
		name, tool, arg, real, want string
	}{
		{"a link to .env", "read", "x", ws + "/app/.env", `denies (rule 1 "deny read path:**/.env")`},
		{"grep reaches .env", "grep", "", ws + "/.env", `denies (rule 1 "deny read path:**/.env")`},
		{"a link into keys asks", "read", "x", ws + "/keys/k", `asks a person for (rule 2 "ask read path:keys/**")`},
		{"keys approved by its rule", "read", "keys/a", ws + "/keys/b", ""},
		{"another file", "grep", "", ws + "/main.go", ""},
		{"find passes over .env", "find", "", ws + "/a/.env", `denies (rule 3 "deny find path:**/.env")`},
		{"a write through a link out of the workspace asks", "write", "x", "/etc/passwd", `asks a person for (rule 12 "ask *")`},
		{"a write inside", "write", "x", ws + "/y", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Call{Tool: tc.tool, Path: tc.arg, Workspace: ws}
			pr := p.PathRules(c, p.Decide(c))
			if pr == nil {
				t.Fatal("no path rules")
			}
			if len(pr.Rules) > 3 {
				t.Errorf("path rules %q: more than the tool's", pr.Rules)
			}
			refusal, err := pr.Refusal(tc.tool, ws)
			if err != nil {
				t.Fatal(err)
			}
			if got := refusal(tc.real); !strings.Contains(got, tc.want) || (got == "") != (tc.want == "") {
				t.Errorf("%s reaching %s: %q, want %q", tc.tool, tc.real, got, tc.want)
			}
		})
	}
}

// Issue 37 item 5 (docs/spec.md 15.3.4): a session grant of a command
// that runs other programs covers that exact command only.
func TestGrant_RunnersCoverOnlyTheExactCommand(t *testing.T) {
	p, err := Parse([]string{"ask bash"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, approved, later string
		covers                bool
	}{
		{"env", "env true", "env sh -c id", false},
		{"python -c", `python3 -c "print(1)"`, `python3 -c "__import__('os').system('id')"`, false},
		{"python file, then -c", "python3 x.py", `python3 -c "import os"`, false},
		{"bash -c", `bash -c "ls"`, `bash -c "id"`, false},
		{"sh script", "sh build.sh", "sh -c id", false},
		{"xargs", "xargs echo", "xargs sh -c id", false},
		{"timeout", "timeout 5 make", "timeout 5 sh -c id", false},
		{"nice", "nice make", "nice sh", false},
		{"nohup", "nohup make", "nohup sh -c id", false},
		{"sudo", "sudo ls", "sudo sh", false},
		{"exec", "exec ls", "exec sh", false},
		{"eval", "eval ls", "eval id", false},
		{"time", "/usr/bin/time ls", "/usr/bin/time sh -c id", false},
		{"command", "command ls", "command sh -c id", false},
		{"watch", "watch ls", "watch id", false},
		{"find -exec", `find . -exec ls {} \;`, `find . -exec sh -c id \;`, false},
		{"node -e", `node -e "1"`, `node -e "require('child_process').execSync('id')"`, false},
		{"perl -e", `perl -e 1`, `perl -e 'system("id")'`, false},
		{"a grant of git does not cover git -c", "git status", "git -c alias.x=!id x", false},
		{"the exact command again", "env true", "env true", true},
		{"a plain program", "git status", "git log -1", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			first := Call{Tool: "bash", Command: tc.approved}
			g, ok := GrantFor(first, p.Decide(first))
			if !ok {
				t.Fatalf("approving %q for the session gave no grant", tc.approved)
			}
			later := Call{Tool: "bash", Command: tc.later}
			if got := g.Covers(later, p.Decide(later)); got != tc.covers {
				t.Fatalf("grant of %q (%s) covers %q: %t, want %t", tc.approved, g, tc.later, got, tc.covers)
			}
		})
	}
}

// A command the policy cannot read (too long, not parsed) is denied with
// a reason the model can act on.
func TestDecide_BlindDenySaysWhy(t *testing.T) {
	p, err := Parse([]string{"deny bash prefix:git push", "allow bash"})
	if err != nil {
		t.Fatal(err)
	}
	d := p.Decide(Call{Tool: "bash", Command: "cat > f <<EOF\n" + strings.Repeat("x", 1010), Cut: true})
	if d.Action != Deny || !strings.Contains(d.Why(), "too long (over 1024 bytes)") {
		t.Fatalf("%s by %s", d.Action, d.Why())
	}
	if d := p.Decide(Call{Tool: "bash", Command: "git push"}); d.Why() != `rule 1 "deny bash prefix:git push"` {
		t.Fatalf("a read command's why %q", d.Why())
	}
}

// A command built to make the matcher work hard (wrappers within find
// -exec within wrappers …) is decided at once, as opaque.
func TestDecide_NestedWrappersStayCheap(t *testing.T) {
	p, err := Parse([]string{"deny bash prefix:git push", "allow bash"})
	if err != nil {
		t.Fatal(err)
	}
	cmd := strings.Repeat("env find -exec ", 68) + "true"
	start := time.Now()
	d := p.Decide(Call{Tool: "bash", Command: cmd})
	if took := time.Since(start); took > time.Second || d.Action != Deny {
		t.Fatalf("%s by %s in %v, want a deny within a second", d.Action, d.Why(), took)
	}
}
