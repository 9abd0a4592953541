package tools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEdit(t *testing.T) {
	tests := []struct {
		name             string
		file             string // initial content of f.txt
		oldText, newText string
		rerun            bool
		isErr            bool
		want             []string // in the content
		after            string   // the file afterwards ("" : unchanged)
		applied          bool     // Details["alreadyApplied"]
	}{
		{name: "exact", file: "a\nfoo()\nb\n", oldText: "foo()", newText: "bar()",
			want: []string{"Successfully replaced text in f.txt.", "-2 foo()", "+2 bar()"}, after: "a\nbar()\nb\n"},
		{name: "multi-line", file: "x\nif a {\n\treturn\n}\ny\n", oldText: "if a {\n\treturn\n}", newText: "if b {\n}",
			after: "x\nif b {\n}\ny\n"},
		{name: "dollar signs are literal", file: "v = 1\n", oldText: "1", newText: "$1 $& $$", after: "v = $1 $& $$\n"},
		{name: "not found", file: "hello\n", oldText: "goodbye", newText: "x", isErr: true,
			want: []string{"Could not find the exact text in f.txt. The old text must match exactly including all whitespace and newlines."}},
		{name: "not unique", file: "x = 1\nx = 1\nx = 1\n", oldText: "x = 1", newText: "y", isErr: true,
			want: []string{"Found 3 occurrences", "must be unique"}},
		{name: "identical", file: "a\n", oldText: "a", newText: "a", isErr: true, want: []string{"No changes"}},
		{name: "empty oldText", file: "a\n", oldText: "", newText: "b", isErr: true, want: []string{"oldText"}},
		{name: "curly quotes in file", file: "say(\u201chello\u201d, \u2018x\u2019)\n", oldText: `say("hello", 'x')`, newText: `say("bye")`,
			want: []string{"Successfully replaced", "normalising"}, after: "say(\"bye\")\n"},
		{name: "trailing spaces in file", file: "func f() {   \n\treturn 1  \n}\n", oldText: "func f() {\n\treturn 1\n}", newText: "func f() {\n\treturn 2\n}",
			after: "func f() {\n\treturn 2\n}\n"},
		{name: "dashes and nbsp", file: "a \u2014 b\u00a0c\n", oldText: "a - b c", newText: "z", after: "z\n"},
		{name: "fuzzy keeps the rest of the file", file: "keep  \n\u201cq\u201d\nkeep \u2014 too\n", oldText: `"q"`, newText: `'q'`,
			after: "keep  \n'q'\nkeep \u2014 too\n"},
		{name: "fuzzy not unique", file: "\u201cq\u201d\nx \u201cq\u201d\n", oldText: `"q"`, newText: "x", isErr: true, want: []string{"Found 2 occurrences"}},
		{name: "crlf file", file: "one\r\ntwo\r\nthree\r\n", oldText: "one\ntwo\n", newText: "uno\ndos\n", after: "uno\r\ndos\r\nthree\r\n"},
		{name: "crlf file with trailing spaces", file: "one  \r\ntwo\r\n", oldText: "one\ntwo", newText: "1\n2", after: "1\r\n2\r\n"},
		{name: "crlf oldText on lf file", file: "one\ntwo\n", oldText: "one\r\ntwo", newText: "x", after: "x\n"},
		{name: "bom kept", file: "\ufeffhello world\n", oldText: "hello", newText: "bye", after: "\ufeffbye world\n"},
		// Exactly-once on re-runs.
		{name: "rerun already applied", file: "a\nbar()\nb\n", oldText: "foo()", newText: "bar()", rerun: true,
			want: []string{"already applied"}, applied: true},
		{name: "first run, same state, is an error", file: "a\nbar()\nb\n", oldText: "foo()", newText: "bar()", isErr: true,
			want: []string{"Could not find the exact text"}},
		{name: "rerun where newText contains oldText", file: "x\nfoo(ctx)\n", oldText: "foo(", newText: "foo(ctx", rerun: true,
			want: []string{"already applied"}, applied: true},
		{name: "rerun not yet applied applies", file: "a\nfoo()\nb\n", oldText: "foo()", newText: "bar()", rerun: true,
			want: []string{"Successfully replaced"}, after: "a\nbar()\nb\n"},
		{name: "rerun, newText twice, is not found", file: "bar()\nbar()\n", oldText: "foo()", newText: "bar()", rerun: true, isErr: true,
			want: []string{"Could not find"}},
		{name: "rerun of a deletion", file: "a\nb\n", oldText: "gone\n", newText: "", rerun: true, applied: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspace(t, map[string]string{"f.txt": tc.file})
			r := call(t, Options{Workspace: ws, Rerun: tc.rerun}, "edit", obj{"path": "f.txt", "oldText": tc.oldText, "newText": tc.newText})
			if r.IsError != tc.isErr {
				t.Fatalf("IsError = %v: %s", r.IsError, r.Content)
			}
			mustContain(t, r.Content, tc.want...)
			if applied, _ := r.Details["alreadyApplied"].(bool); applied != tc.applied {
				t.Fatalf("alreadyApplied = %v: %s", applied, r.Content)
			}
			if tc.applied {
				mustNotContain(t, r.Content, "Could not find")
			}
			want := tc.after
			if want == "" {
				want = tc.file
			}
			if got := readFile(t, filepath.Join(ws, "f.txt")); got != want {
				t.Fatalf("file is %q, want %q", got, want)
			}
		})
	}
}

func TestEditRerunAfterCrash(t *testing.T) {
	// The first attempt applied the edit, the worker died before recording
	// it; the re-run must report success without touching the file again.
	ws := workspace(t, map[string]string{"main.go": "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"})
	args := obj{"path": "main.go", "oldText": "println(\"hi\")", "newText": "println(\"hi\")\n\tprintln(\"there\")"}
	mustOK(t, call(t, Options{Workspace: ws}, "edit", args))
	once := readFile(t, filepath.Join(ws, "main.go"))
	r := call(t, Options{Workspace: ws, Rerun: true}, "edit", args)
	mustOK(t, r)
	if r.Details["alreadyApplied"] != true {
		t.Fatalf("re-run not recognised as applied: %s", r.Content)
	}
	if got := readFile(t, filepath.Join(ws, "main.go")); got != once {
		t.Fatalf("re-run changed the file:\n%s", got)
	}
	if strings.Count(once, "there") != 1 {
		t.Fatalf("edit applied %d times", strings.Count(once, "there"))
	}
}

func TestEditKeepsModeAndBoundsDiff(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 500; i++ {
		b.WriteString("old line\n")
	}
	ws := workspace(t, map[string]string{"s.sh": "#!/bin/sh\nBEGIN\n" + b.String() + "END\n"})
	p := filepath.Join(ws, "s.sh")
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	r := call(t, Options{Workspace: ws}, "edit", obj{"path": "s.sh", "oldText": "BEGIN\n" + b.String() + "END", "newText": "short"})
	mustOK(t, r)
	mustContain(t, r.Content, "more lines")
	if len(r.Content) > 8*1024 {
		t.Fatalf("diff not bounded: %d bytes", len(r.Content))
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o755 {
		t.Fatalf("mode changed to %v", fi.Mode())
	}
	if got := readFile(t, p); got != "#!/bin/sh\nshort\n" {
		t.Fatalf("got %q", got)
	}
	mustErr(t, call(t, Options{Workspace: ws}, "edit", obj{"path": "missing.txt", "oldText": "a", "newText": "b"}), "File not found: missing.txt")
}
