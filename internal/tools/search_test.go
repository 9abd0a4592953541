package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// searchTree is a workspace with .gitignore files at two levels, negations,
// a .git directory, a binary file and dotfiles.
func searchTree(t *testing.T) string {
	return workspace(t, map[string]string{
		".gitignore":          "# comment\n*.log\nbuild/\n/root-only.txt\n!keep.log\nsecret/**\n!secret/public.txt\n",
		".hidden":             "needle hidden\n",
		"app.log":             "needle log\n",
		"keep.log":            "needle keep\n",
		"bin.dat":             "needle\x00binary",
		"build/out.txt":       "needle build\n",
		"root-only.txt":       "needle root\n",
		"sub/root-only.txt":   "needle nested root-only\n",
		"secret/private.txt":  "needle private\n",
		"secret/public.txt":   "needle public\n",
		"src/.gitignore":      "generated.go\n",
		"src/generated.go":    "// needle generated\n",
		"src/main.go":         "package main\n\nfunc main() {\n\tprintln(\"Needle\")\n}\n",
		"src/util.go":         "package main\n// needle in util\n",
		"src/deep/build/x.go": "package build // needle deep build\n",
		".git/config":         "needle git\n",
		"long.txt":            strings.Repeat("a", 600) + " needle\n",
	})
}

func TestGrep(t *testing.T) {
	ws := searchTree(t)
	cut := strings.Repeat("a", GrepMaxLineLength) + "... [truncated]"
	tests := []struct {
		name    string
		args    obj
		isErr   bool
		exact   string
		want    []string
		notWant []string
	}{
		{name: "respects gitignore, nested and negated", args: obj{"pattern": "needle"},
			exact: ".hidden:1: needle hidden\n" +
				"keep.log:1: needle keep\n" +
				"long.txt:1: " + cut + "\n" +
				"secret/public.txt:1: needle public\n" +
				"src/util.go:2: // needle in util\n" +
				"sub/root-only.txt:1: needle nested root-only\n\n" +
				"[Some lines truncated to 500 chars. Use read tool to see full lines]"},
		{name: "ignoreCase", args: obj{"pattern": "NEEDLE", "ignoreCase": true, "glob": "*.go"},
			exact: "src/main.go:4: \tprintln(\"Needle\")\nsrc/util.go:2: // needle in util"},
		{name: "case-sensitive by default", args: obj{"pattern": "Needle"}, exact: "src/main.go:4: \tprintln(\"Needle\")"},
		{name: "regex", args: obj{"pattern": `^package \w+$`}, want: []string{"src/main.go:1: package main", "src/util.go:1: package main"}},
		{name: "invalid regex", args: obj{"pattern": "println("}, isErr: true, want: []string{"Invalid regular expression", "literal=true"}},
		{name: "literal", args: obj{"pattern": "println(", "literal": true}, exact: "src/main.go:4: \tprintln(\"Needle\")"},
		{name: "glob with path", args: obj{"pattern": "needle", "glob": "src/**/*.go"}, exact: "src/util.go:2: // needle in util"},
		{name: "negated glob", args: obj{"pattern": "needle", "glob": "!*.txt"}, notWant: []string{".txt:"}, want: []string{"keep.log:1:"}},
		{name: "path is a directory", args: obj{"pattern": "needle", "path": "src"}, exact: "src/util.go:2: // needle in util"},
		{name: "path is a file", args: obj{"pattern": "needle", "path": "src/util.go"}, exact: "src/util.go:2: // needle in util"},
		{name: "explicit ignored file is searched", args: obj{"pattern": "needle", "path": "app.log"}, exact: "app.log:1: needle log"},
		{name: "no matches", args: obj{"pattern": "nothing-like-this"}, exact: "No matches found"},
		{name: "path not found", args: obj{"pattern": "x", "path": "nope"}, isErr: true, want: []string{"Path not found: nope"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, Options{Workspace: ws}, "grep", tc.args)
			if r.IsError != tc.isErr {
				t.Fatalf("IsError = %v: %s", r.IsError, r.Content)
			}
			if tc.exact != "" && r.Content != tc.exact {
				t.Fatalf("got:\n%s\nwant:\n%s", r.Content, tc.exact)
			}
			mustContain(t, r.Content, tc.want...)
			mustNotContain(t, r.Content, tc.notWant...)
		})
	}
}

func TestGrepContextAndLimits(t *testing.T) {
	var many, wide strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&many, "hit %d\n", i)
	}
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&wide, "hit %s\n", strings.Repeat("w", 400))
	}
	ws := workspace(t, map[string]string{
		"ctx.txt":  "a\nb\nmatch1\nc\nd\ne\nf\nmatch2\nmatch3\ng\n",
		"ctx2.txt": "match4\nz\n",
		"many.txt": many.String(),
		"wide.txt": wide.String(),
	})
	tests := []struct {
		name  string
		args  obj
		exact string
		want  []string
	}{
		{name: "context merges and separates groups", args: obj{"pattern": "match", "context": 1, "glob": "ctx*.txt"},
			exact: "ctx.txt-2- b\nctx.txt:3: match1\nctx.txt-4- c\n--\nctx.txt-7- f\nctx.txt:8: match2\nctx.txt:9: match3\nctx.txt-10- g\n--\nctx2.txt:1: match4\nctx2.txt-2- z"},
		{name: "match limit", args: obj{"pattern": "hit", "path": "many.txt", "limit": 3},
			exact: "many.txt:1: hit 1\nmany.txt:2: hit 2\nmany.txt:3: hit 3\n\n[3 matches limit reached. Use limit=6 for more, or refine pattern]"},
		{name: "exactly the limit is no notice", args: obj{"pattern": "hit", "path": "many.txt", "limit": 10}, want: []string{"many.txt:10: hit 10"}},
		{name: "default limit 100", args: obj{"pattern": "hit", "path": "wide.txt", "limit": 1000},
			want: []string{"[50.0KB limit reached]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, Options{Workspace: ws}, "grep", tc.args)
			mustOK(t, r)
			if tc.exact != "" && r.Content != tc.exact {
				t.Fatalf("got:\n%s\nwant:\n%s", r.Content, tc.exact)
			}
			mustContain(t, r.Content, tc.want...)
			if len(r.Content) > MaxBytes+300 {
				t.Fatalf("%d bytes: over the limit", len(r.Content))
			}
			if strings.Contains(tc.name, "exactly") {
				mustNotContain(t, r.Content, "limit reached")
			}
		})
	}
	r := call(t, Options{Workspace: ws}, "grep", obj{"pattern": "hit", "path": "wide.txt"})
	mustContain(t, r.Content, "[100 matches limit reached. Use limit=200 for more, or refine pattern]")
}

func TestFind(t *testing.T) {
	ws := searchTree(t)
	tests := []struct {
		name  string
		args  obj
		isErr bool
		exact string
	}{
		{name: "file name pattern at any depth", args: obj{"pattern": "*.go"}, exact: "src/main.go\nsrc/util.go"}, // build/ ignores src/deep/build
		{name: "double star", args: obj{"pattern": "**/*.txt"}, exact: "long.txt\nsecret/public.txt\nsub/root-only.txt"},
		{name: "braces", args: obj{"pattern": "*.{go,log}"}, exact: "keep.log\nsrc/main.go\nsrc/util.go"},
		{name: "path pattern", args: obj{"pattern": "src/*.go"}, exact: "src/main.go\nsrc/util.go"},
		{name: "question mark", args: obj{"pattern": "?ain.go"}, exact: "src/main.go"},
		{name: "directories get a slash", args: obj{"pattern": "sub"}, exact: "sub/"},
		{name: "dotfiles, not .git", args: obj{"pattern": ".*"}, exact: ".gitignore\n.hidden\nsrc/.gitignore"},
		{name: "search path", args: obj{"pattern": "*.go", "path": "src"}, exact: "src/main.go\nsrc/util.go"},
		{name: "explicit ignored directory is searched", args: obj{"pattern": "*", "path": "src/deep/build"}, exact: "src/deep/build/x.go"},
		{name: "limit", args: obj{"pattern": "*.go", "limit": 1},
			exact: "src/main.go\n\n[1 results limit reached. Use limit=2 for more, or refine pattern]"},
		{name: "none", args: obj{"pattern": "config"}, exact: "No files found matching pattern"},
		{name: "not a directory", args: obj{"pattern": "*", "path": "long.txt"}, isErr: true, exact: "Not a directory: long.txt"},
		{name: "not found", args: obj{"pattern": "*", "path": "nope"}, isErr: true, exact: "Path not found: nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, Options{Workspace: ws}, "find", tc.args)
			if r.IsError != tc.isErr {
				t.Fatalf("IsError = %v: %s", r.IsError, r.Content)
			}
			if r.Content != tc.exact {
				t.Fatalf("got:\n%s\nwant:\n%s", r.Content, tc.exact)
			}
		})
	}
}

func TestLs(t *testing.T) {
	ws := workspace(t, map[string]string{".env": "", "B.txt": "", "a.txt": "", "dir/x": "", "c/": "", "empty/": ""})
	if err := os.Symlink(filepath.Join(ws, "dir"), filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		args  obj
		isErr bool
		exact string
	}{
		{name: "sorted, dirs marked, dotfiles", args: obj{}, exact: ".env\na.txt\nB.txt\nc/\ndir/\nempty/\nlink/"},
		{name: "subdirectory", args: obj{"path": "dir"}, exact: "x"},
		{name: "empty", args: obj{"path": "empty"}, exact: "(empty directory)"},
		{name: "limit", args: obj{"limit": 2}, exact: ".env\na.txt\n\n[2 entries limit reached. Use limit=4 for more]"},
		{name: "not a directory", args: obj{"path": "a.txt"}, isErr: true, exact: "Not a directory: a.txt"},
		{name: "not found", args: obj{"path": "nope"}, isErr: true, exact: "Path not found: nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, Options{Workspace: ws}, "ls", tc.args)
			if r.IsError != tc.isErr {
				t.Fatalf("IsError = %v: %s", r.IsError, r.Content)
			}
			if r.Content != tc.exact {
				t.Fatalf("got:\n%s\nwant:\n%s", r.Content, tc.exact)
			}
		})
	}
}
