package tools

import (
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"*.go", "a.go", true},
		{"*.go", "dir/a.go", false},
		{"**/*.go", "a.go", true},
		{"**/*.go", "x/y/a.go", true},
		{"src/**", "src/a/b", true},
		{"src/**", "src", false},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"{a,b}.txt", "b.txt", true},
		{"{a,b}.txt", "c.txt", false},
		{"{a,{b,c}}.md", "c.md", true},
		{"src/{x,y}/*.ts", "src/y/z.ts", true},
		{"[!a]*.txt", "b.txt", true},
		{"[!a]*.txt", "a.txt", false},
		{"[a-c].txt", "b.txt", true},
		{"file?.txt", "file1.txt", true},
		{"file?.txt", "file10.txt", false},
		{"*", "x/y", false},
		{"./src/*.go", "src/a.go", true},
		{"{literal}", "{literal}", true},
		{"[bad", "[bad", false},
	}
	for _, tc := range tests {
		if got := compileGlob(tc.pattern).match(tc.path); got != tc.want {
			t.Errorf("glob %q on %q = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

func TestGitignoreRules(t *testing.T) {
	const base = "/ws"
	tests := []struct {
		name  string
		rules string
		path  string
		dir   bool
		want  bool
	}{
		{"name at any depth", "*.log", "/ws/a/b/x.log", false, true},
		{"name not matching", "*.log", "/ws/a/x.txt", false, false},
		{"anchored by leading slash", "/todo.txt", "/ws/todo.txt", false, true},
		{"anchored not deeper", "/todo.txt", "/ws/a/todo.txt", false, false},
		{"middle slash anchors", "doc/*.txt", "/ws/doc/a.txt", false, true},
		{"middle slash anchors, not deeper", "doc/*.txt", "/ws/x/doc/a.txt", false, false},
		{"dir only matches dirs", "build/", "/ws/x/build", true, true},
		{"dir only skips files", "build/", "/ws/build", false, false},
		{"leading double star", "**/cache", "/ws/a/b/cache", true, true},
		{"inner double star", "a/**/z", "/ws/a/b/c/z", false, true},
		{"trailing double star is inside only", "out/**", "/ws/out", true, false},
		{"trailing double star", "out/**", "/ws/out/f", false, true},
		{"negation", "*.log\n!keep.log", "/ws/keep.log", false, false},
		{"last rule wins", "!keep.log\n*.log", "/ws/keep.log", false, true},
		{"comment and blank", "# *.go\n\n", "/ws/a.go", false, false},
		{"escaped hash", `\#x`, "/ws/#x", false, true},
		{"trailing spaces dropped", "a.txt   ", "/ws/a.txt", false, true},
		{"crlf file", "a.txt\r\nb.txt\r\n", "/ws/b.txt", false, true},
		{"outside base", "*.log", "/other/x.log", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stack := []*ignoreFile{parseIgnore(base, tc.rules)}
			if got := ignored(stack, tc.path, tc.dir); got != tc.want {
				t.Fatalf("ignored(%q) = %v, want %v", tc.path, got, tc.want)
			}
		})
	}
	// A deeper file overrides a shallower one.
	stack := []*ignoreFile{parseIgnore("/ws", "*.gen"), parseIgnore("/ws/keep", "!*.gen")}
	if ignored(stack, "/ws/keep/a.gen", false) || !ignored(stack, "/ws/other/a.gen", false) {
		t.Fatal("nested .gitignore precedence")
	}
}

func TestGitignoreFromParentOfSearchRoot(t *testing.T) {
	// The workspace's .gitignore applies when searching a subdirectory, and
	// .git/info/exclude applies too.
	ws := workspace(t, map[string]string{
		".gitignore":        "/src/gen/\n",
		".git/info/exclude": "*.tmp\n",
		"src/gen/a.go":      "needle\n",
		"src/b.go":          "needle\n",
		"src/c.tmp":         "needle\n",
	})
	r := call(t, Options{Workspace: ws}, "grep", obj{"pattern": "needle", "path": "src"})
	if r.Content != "src/b.go:1: needle" {
		t.Fatalf("got %q", r.Content)
	}
	r = call(t, Options{Workspace: ws}, "find", obj{"pattern": "*", "path": "src"})
	if r.Content != "src/b.go" {
		t.Fatalf("got %q", r.Content)
	}
}

// A pattern from a model that is not valid, or spells more paths than the
// brace bound allows, is a one-line error naming it, not an empty result.
func TestGlobRejectsBadPatterns(t *testing.T) {
	ws := workspace(t, map[string]string{"a.txt": "needle\n"})
	many := strings.Repeat("{a,b}", 9) // 512 alternatives
	tests := []struct {
		tool string
		args obj
		want string
	}{
		{"find", obj{"pattern": "[bad"}, `find: glob pattern "[bad" is not valid`},
		{"grep", obj{"pattern": "needle", "glob": "src/[bad"}, `grep: glob pattern "src/[bad" is not valid`},
		{"grep", obj{"pattern": "needle", "glob": "!a[b"}, `grep: glob pattern "a[b" is not valid: syntax error in pattern`},
		{"find", obj{"pattern": many}, `find: glob pattern "` + many + `" has more than 256 brace alternatives`},
	}
	for _, tc := range tests {
		r := call(t, Options{Workspace: ws}, tc.tool, tc.args)
		if !r.IsError || !strings.HasPrefix(r.Content, tc.want) || strings.Contains(r.Content, "\n") {
			t.Errorf("%s %v: got %q (error %v), want one line starting %q", tc.tool, tc.args, r.Content, r.IsError, tc.want)
		}
	}
	// 256 alternatives are still searched.
	r := call(t, Options{Workspace: ws}, "find", obj{"pattern": strings.Repeat("{a,b}", 8) + "*.txt"})
	if r.IsError {
		t.Fatalf("256 alternatives refused: %q", r.Content)
	}
}

// Braces without a top-level comma are literal, and a "**" inside a
// segment is a "*".
func TestGlobLiteralBraces(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"{x}.go", "{x}.go", true},
		{"{x}.go", "x.go", false},
		{"a}b{c", "a}b{c", true},
		{`\{a,b}`, "{a,b}", true},
		{"{a,{b}}.md", "{b}.md", true},
		{"x**y.go", "xzzy.go", true},
		{"src/**/*.go", "src/a.go", true},
	}
	for _, tc := range tests {
		if got := compileGlob(tc.pattern).match(tc.path); got != tc.want {
			t.Errorf("glob %q on %q = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

// The .gitignore rules follow git where a simpler matcher goes wrong: "[!"
// classes, "**" that must backtrack, and a re-included directory that does
// not re-include its files.
func TestGitignoreGitSemantics(t *testing.T) {
	tests := []struct {
		name, rules, path string
		dir, want         bool
	}{
		{"bang class", "[!a].txt", "/ws/b.txt", false, true},
		{"bang class excludes", "[!a].txt", "/ws/a.txt", false, false},
		{"double star backtracks", "a/**/b/c", "/ws/a/b/x/b/c", false, true},
		{"double star inside a segment", "a/x**y", "/ws/a/xzy", false, true},
		{"re-included dir keeps file rules", "*.txt\n!foo", "/ws/foo/bar.txt", false, true},
		{"braces are literal", "{a,b}.txt", "/ws/{a,b}.txt", false, true},
		{"braces do not alternate", "{a,b}.txt", "/ws/a.txt", false, false},
		{"escaped bang", `\!keep`, "/ws/!keep", false, true},
		{"bad line skipped", "[bad\n*.log", "/ws/x.log", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stack := []*ignoreFile{parseIgnore("/ws", tc.rules)}
			if got := ignored(stack, tc.path, tc.dir); got != tc.want {
				t.Fatalf("ignored(%q) = %v, want %v", tc.path, got, tc.want)
			}
		})
	}
}
