package tools

import (
	"fmt"
	"strings"
	"testing"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestRead(t *testing.T) {
	long := strings.Repeat("x", MaxBytes+10)
	ws := workspace(t, map[string]string{
		"small.txt": "alpha\nbeta\ngamma\n",
		"big.txt":   numbered(5234),
		"wide.txt":  strings.Repeat(strings.Repeat("w", 99)+"\n", 1000), // 100 KB in 1000 lines
		"long.txt":  "short\n" + long + "\n",
		"empty.txt": "",
		"dir/":      "",
		"img.png":   "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 100),
		"blob.bin":  "ab\x00cd",
		"img.jpg":   "\xFF\xD8\xFF\xE0" + strings.Repeat("\x00", 20),
		"img.gif":   "GIF89a" + strings.Repeat("\x00", 20),
		"img.webp":  "RIFF\x10\x00\x00\x00WEBPVP8 " + strings.Repeat("\x00", 20),
		"crlf.txt":  "one\r\ntwo\r\n",
		"huge.txt":  "a\nb\n" + strings.Repeat("h", 200000) + "\nc",
		"nonl.txt":  "x\ny",
	})
	o := Options{Workspace: ws}
	tests := []struct {
		name    string
		args    obj
		isErr   bool
		exact   string
		want    []string
		notWant []string
	}{
		{name: "whole file", args: obj{"path": "small.txt"}, exact: "alpha\nbeta\ngamma"},
		{name: "offset", args: obj{"path": "small.txt", "offset": 2}, exact: "beta\ngamma"},
		{name: "offset and limit", args: obj{"path": "small.txt", "offset": 1, "limit": 2},
			exact: "alpha\nbeta\n\n[1 more lines in file. Use offset=3 to continue.]"},
		{name: "absolute path", args: obj{"path": ws + "/small.txt"}, exact: "alpha\nbeta\ngamma"},
		{name: "head truncated by lines", args: obj{"path": "big.txt"},
			want:    []string{"line 1\n", "line 2000\n\n[Showing lines 1-2000 of 5234. Use offset=2001 to continue.]"},
			notWant: []string{"line 2001"}},
		{name: "continue at offset", args: obj{"path": "big.txt", "offset": 2001},
			want:    []string{"line 2001\n", "[Showing lines 2001-4000 of 5234. Use offset=4001 to continue.]"},
			notWant: []string{"line 2000\n", "line 4001"}},
		{name: "last page", args: obj{"path": "big.txt", "offset": 5001}, want: []string{"line 5234"}, notWant: []string{"Showing"}},
		{name: "head truncated by bytes", args: obj{"path": "wide.txt"},
			want: []string{"[Showing lines 1-512 of 1000 (50.0KB limit). Use offset=513 to continue.]"}},
		{name: "line longer than the limit", args: obj{"path": "long.txt", "offset": 2},
			exact: fmt.Sprintf("[Line 2 is 50.0KB, exceeds 50.0KB limit. Use bash: sed -n '2p' long.txt | head -c %d]", MaxBytes)},
		{name: "offset beyond end", args: obj{"path": "small.txt", "offset": 10}, isErr: true,
			want: []string{"Offset 10 is beyond end of file (3 lines total)"}},
		{name: "huge line stops the page", args: obj{"path": "huge.txt"},
			exact: "a\nb\n\n[Showing lines 1-2 of 4 (50.0KB limit). Use offset=3 to continue.]"},
		{name: "huge line at offset", args: obj{"path": "huge.txt", "offset": 3},
			exact: fmt.Sprintf("[Line 3 is 195.3KB, exceeds 50.0KB limit. Use bash: sed -n '3p' huge.txt | head -c %d]", MaxBytes)},
		{name: "after the huge line", args: obj{"path": "huge.txt", "offset": 4}, exact: "c"},
		{name: "no final newline", args: obj{"path": "nonl.txt"}, exact: "x\ny"},
		{name: "limit past the end", args: obj{"path": "nonl.txt", "limit": 10}, exact: "x\ny"},
		{name: "empty file", args: obj{"path": "empty.txt"}, exact: "(empty file)"},
		{name: "crlf kept", args: obj{"path": "crlf.txt"}, exact: "one\r\ntwo\r"},
		{name: "directory", args: obj{"path": "dir"}, isErr: true, want: []string{"directory", "ls"}},
		{name: "missing file", args: obj{"path": "nope.txt"}, isErr: true, want: []string{"File not found: nope.txt"}},
		{name: "image", args: obj{"path": "img.png"}, want: []string{"image/png", "108 bytes"}},
		{name: "jpeg", args: obj{"path": "img.jpg"}, want: []string{"image/jpeg", "24 bytes"}},
		{name: "gif", args: obj{"path": "img.gif"}, want: []string{"image/gif"}},
		{name: "webp", args: obj{"path": "img.webp"}, want: []string{"image/webp"}},
		{name: "binary", args: obj{"path": "blob.bin"}, want: []string{"binary file", "5 bytes"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, o, "read", tc.args)
			if r.IsError != tc.isErr {
				t.Fatalf("IsError = %v: %s", r.IsError, r.Content)
			}
			if tc.exact != "" && r.Content != tc.exact {
				t.Fatalf("got %q, want %q", r.Content, tc.exact)
			}
			mustContain(t, r.Content, tc.want...)
			mustNotContain(t, r.Content, tc.notWant...)
			if len(r.Content) > MaxBytes+200 {
				t.Fatalf("content is %d bytes, over the limit", len(r.Content))
			}
		})
	}
}

func TestWrite(t *testing.T) {
	ws := workspace(t, map[string]string{"old.txt": "old content", "adir/": ""})
	o := Options{Workspace: ws}
	tests := []struct {
		name, path, content string
		file                string // where it lands, relative to ws
		isErr               bool
		want                string
	}{
		{name: "new file", path: "new.txt", content: "hello", file: "new.txt", want: "Successfully wrote 5 bytes to new.txt"},
		{name: "overwrite", path: "old.txt", content: "new", file: "old.txt", want: "Successfully wrote 3 bytes to old.txt"},
		{name: "creates parents", path: "a/b/c/deep.txt", content: "deep\n", file: "a/b/c/deep.txt", want: "Successfully wrote 5 bytes"},
		{name: "utf8 bytes counted", path: "u.txt", content: "héllo", file: "u.txt", want: "Successfully wrote 6 bytes"},
		{name: "empty content", path: "e.txt", content: "", file: "e.txt", want: "Successfully wrote 0 bytes"},
		{name: "onto a directory", path: "adir", content: "x", isErr: true, want: "directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, o, "write", obj{"path": tc.path, "content": tc.content})
			if r.IsError != tc.isErr {
				t.Fatalf("IsError = %v: %s", r.IsError, r.Content)
			}
			mustContain(t, r.Content, tc.want)
			if tc.file != "" {
				if got := readFile(t, ws+"/"+tc.file); got != tc.content {
					t.Fatalf("file holds %q, want %q", got, tc.content)
				}
			}
		})
	}
	// Idempotent: writing the same thing twice leaves the same file.
	for i := 0; i < 2; i++ {
		mustOK(t, call(t, Options{Workspace: ws, Rerun: i == 1}, "write", obj{"path": "twice.txt", "content": "same"}))
	}
	if got := readFile(t, ws+"/twice.txt"); got != "same" {
		t.Fatalf("got %q", got)
	}
}
