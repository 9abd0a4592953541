package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/policy"
)

const secretText = "API_KEY=s3cret-0123456789"

// ruled is the options of a call of tool in ws under rules (Default
// after them), as the worker builds them from the tool call's input.
func ruled(t *testing.T, ws, tool, arg string, rules ...string) Options {
	t.Helper()
	p, err := policy.Compile(nil, append(rules, policy.Default...))
	if err != nil {
		t.Fatal(err)
	}
	c := policy.Call{Tool: tool, Path: arg, Workspace: ws}
	o := Options{Workspace: ws, Confine: true}
	if pr := p.PathRules(c, p.Decide(c)); pr != nil {
		if o.PathRule, err = pr.Refusal(tool, ws); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// Issue 37 item 4 (docs/spec.md 15.3.2): under "deny read path:**/.env" a
// link with an innocent name that leads to .env is refused by its real
// location (a link to the link too), in one line naming the rule; so are grep of the link and an
// edit or write through it under their own rule; the secret never shows.
func TestPathRule_LinkToDeniedFileRefused(t *testing.T) {
	ws := workspace(t, map[string]string{".env": secretText + "\n", "app/main.go": "package main\n"})
	if err := os.Symlink("../.env", filepath.Join(ws, "app", "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("notes.txt", filepath.Join(ws, "app", "again")); err != nil {
		t.Fatal(err)
	}
	const deny = "deny read path:**/.env"
	for _, arg := range []string{"app/notes.txt", "app/again"} {
		r := call(t, ruled(t, ws, Read, arg, deny), Read, obj{"path": arg})
		want := "read: " + arg + ` resolves to .env, which the approval policy denies (rule 1 "deny read path:**/.env")`
		if !r.IsError || r.Content != want {
			t.Errorf("read %s: %+v\nwant the error %q", arg, r, want)
		}
	}
	r := call(t, ruled(t, ws, Grep, "app/notes.txt", deny), Grep, obj{"pattern": "KEY", "path": "app/notes.txt"})
	if !r.IsError || strings.Contains(r.Content, "s3cret") || !strings.Contains(r.Content, "rule 1") {
		t.Errorf("grep of the link: %+v", r)
	}
	r = call(t, ruled(t, ws, Edit, "app/notes.txt", "deny edit path:**/.env"), Edit,
		obj{"path": "app/notes.txt", "oldText": "API_KEY", "newText": "X"})
	if !r.IsError || !strings.Contains(r.Content, `rule 1 "deny edit path:**/.env"`) {
		t.Errorf("edit through the link: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".env")); string(b) != secretText+"\n" {
		t.Errorf(".env changed: %q", b)
	}
	// The other file of the same directory reads as before.
	mustOK(t, call(t, ruled(t, ws, Read, "app/main.go", deny), Read, obj{"path": "app/main.go"}))
}

// Issue 37 item 4 (docs/spec.md 15.3.2): a grep of the directory holding
// .env runs, passes over .env and says one file was passed over; find and
// ls, which show names and never contents, list .env under a read rule
// and pass over it under a rule of their own.
func TestPathRule_WalksPassOverDeniedFiles(t *testing.T) {
	ws := workspace(t, map[string]string{".env": secretText + "\n", "config.go": "// API_KEY comes from the environment\n",
		"sub/.env": secretText + "\n"})
	const deny = "deny read path:**/.env"
	r := call(t, ruled(t, ws, Grep, "", deny), Grep, obj{"pattern": "API_KEY"})
	if r.IsError || strings.Contains(r.Content, "s3cret") || !strings.Contains(r.Content, "config.go:1:") ||
		!strings.Contains(r.Content, "[2 files passed over: path rules of the approval policy cover them]") {
		t.Errorf("grep of the workspace: %+v", r)
	}
	r = call(t, ruled(t, ws, Find, "", deny), Find, obj{"pattern": ".env"})
	if r.Content != ".env\nsub/.env" {
		t.Errorf("find under a read rule: %q, want both names", r.Content)
	}
	r = call(t, ruled(t, ws, Find, "", "deny find path:**/.env"), Find, obj{"pattern": "*"})
	if strings.Contains(r.Content, ".env") || !strings.Contains(r.Content, "config.go") ||
		!strings.Contains(r.Content, "[2 files passed over") {
		t.Errorf("find under a find rule: %q", r.Content)
	}
	r = call(t, ruled(t, ws, Ls, "", "deny ls path:**/.env"), Ls, obj{})
	if strings.Contains(r.Content, ".env") || !strings.Contains(r.Content, "config.go") ||
		!strings.Contains(r.Content, "[1 file passed over: a path rule of the approval policy covers it]") {
		t.Errorf("ls under an ls rule: %q", r.Content)
	}
}
