package tools

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// callDeadline bounds every call on a special file: a regression that blocks
// on a FIFO or streams a device must fail the test, not hang it.
const callDeadline = 5 * time.Second

// callWithin runs a tool call and returns its result, or ends the test binary
// when the call has not returned within callDeadline. It panics rather than
// failing the test because the stuck call cannot be stopped: left running, a
// read of /dev/zero would keep growing the test process's memory.
func callWithin(t *testing.T, o Options, tool string, args any) Result {
	t.Helper()
	done := make(chan Result, 1)
	go func() { done <- call(t, o, tool, args) }()
	select {
	case r := <-done:
		return r
	case <-time.After(callDeadline):
		panic(fmt.Sprintf("%s %v did not return within %v (blocked on or streaming a special file)", tool, args, callDeadline))
	}
}

// specialFiles adds to dir a FIFO, a unix socket and, where this process may
// (root, CI), a character device with /dev/zero's numbers (1, 5). It returns
// the names created and the kind each error must name.
func specialFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	kinds := map[string]string{}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	kinds["pipe"] = "named pipe"
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	if err != nil {
		t.Fatalf("unix socket: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	kinds["sock"] = "socket"
	err = unix.Mknod(filepath.Join(dir, "zero"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5)))
	if err == nil {
		kinds["zero"] = "character device"
	} else {
		t.Logf("no character device in this run (mknod: %v); run as root to cover it", err)
	}
	return kinds
}

// TestSpecialFilesAreRefused: read, grep, find, ls, edit and write of a path
// that is a FIFO, a socket or a device return at once with a one-line error
// naming the path and its kind (issue 20 item 2: grep of a device streamed it
// into memory until the worker was OOM-killed; a FIFO blocked open forever).
// Spec 14.3.4.
func TestSpecialFilesAreRefused(t *testing.T) {
	ws := workspace(t, map[string]string{"a.txt": "needle\n"})
	kinds := specialFiles(t, ws)
	o := Options{Workspace: ws, Confine: true}
	for name, kind := range kinds {
		cases := []struct {
			tool string
			args obj
			want string
		}{
			{Read, obj{"path": name}, fmt.Sprintf("read: %s is a %s, not a regular file", name, kind)},
			{Grep, obj{"pattern": "x", "path": name}, fmt.Sprintf("grep: %s is a %s, not a regular file", name, kind)},
			{Edit, obj{"path": name, "oldText": "a", "newText": "b"}, fmt.Sprintf("edit: %s is a %s, not a regular file", name, kind)},
			{Write, obj{"path": name, "content": "x"}, fmt.Sprintf("write: %s is a %s, not a regular file", name, kind)},
			{Find, obj{"pattern": "*", "path": name}, fmt.Sprintf("find: %s is a %s, not a directory", name, kind)},
			{Ls, obj{"path": name}, fmt.Sprintf("ls: %s is a %s, not a directory", name, kind)},
		}
		for _, c := range cases {
			t.Run(c.tool+"/"+name, func(t *testing.T) {
				r := callWithin(t, o, c.tool, c.args)
				mustErr(t, r, c.want)
				if strings.Contains(r.Content, "\n") {
					t.Fatalf("error is not one line: %q", r.Content)
				}
			})
		}
	}
	// write refused the special file and left it as it was.
	if fi, err := os.Lstat(filepath.Join(ws, "pipe")); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", fi, err)
	}
}

// TestSearchSkipsSpecialFiles: grep and find over a directory that holds
// special files, also as .gitignore, complete; grep skips them and searches
// the rest, find lists names only.
// Spec 14.3.4.
func TestSearchSkipsSpecialFiles(t *testing.T) {
	ws := workspace(t, map[string]string{"a.txt": "needle\n", "sub/b.txt": "needle too\n"})
	kinds := specialFiles(t, ws)
	// A .gitignore that is a FIFO (open blocks) and one that is a device
	// (reads never end) must not stop a walk either.
	if err := syscall.Mkfifo(filepath.Join(ws, ".gitignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := kinds["zero"]; ok {
		if err := unix.Mknod(filepath.Join(ws, "sub", ".gitignore"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5))); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{Workspace: ws, Confine: true}

	r := callWithin(t, o, Grep, obj{"pattern": "needle"})
	mustOK(t, r)
	if want := "a.txt:1: needle\nsub/b.txt:1: needle too"; r.Content != want {
		t.Fatalf("grep over the directory:\n%s\nwant:\n%s", r.Content, want)
	}
	r = callWithin(t, o, Grep, obj{"pattern": ".", "glob": "*"})
	mustOK(t, r)
	for name := range kinds {
		mustNotContain(t, r.Content, name+":")
	}

	r = callWithin(t, o, Find, obj{"pattern": "*"})
	mustOK(t, r)
	mustContain(t, r.Content, "a.txt", "sub/b.txt")

	r = callWithin(t, o, Ls, obj{})
	mustOK(t, r)
	mustContain(t, r.Content, "a.txt", "pipe")
}

// TestReadAndGrepAreBounded: a large regular file is read through a bound:
// read returns at most MaxBytes of it, grep refuses a file above its limit
// with a message instead of loading it, and skips it in a directory.
// Spec 14.3.4.
func TestReadAndGrepAreBounded(t *testing.T) {
	ws := workspace(t, map[string]string{"small.txt": "needle\n"})
	big := filepath.Join(ws, "big.log")
	line := strings.Repeat("x", 99) + "\n"
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	chunk := []byte("needle\n" + strings.Repeat(line, (1<<20)/len(line)))
	for n := 0; n <= grepMaxFileSize; n += len(chunk) {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	o := Options{Workspace: ws, Confine: true}

	r := callWithin(t, o, Read, obj{"path": "big.log"})
	mustOK(t, r)
	body, _, _ := strings.Cut(r.Content, "\n\n[Showing")
	if len(body) > MaxBytes {
		t.Fatalf("read returned %d bytes, more than MaxBytes %d", len(body), MaxBytes)
	}

	r = callWithin(t, o, Grep, obj{"pattern": "needle", "path": "big.log"})
	mustErr(t, r, "grep: big.log is larger than grep's 32.0MB limit")

	r = callWithin(t, o, Grep, obj{"pattern": "needle"})
	mustOK(t, r)
	if r.Content != "small.txt:1: needle" {
		t.Fatalf("grep over the directory: %s", r.Content)
	}
}

// TestSpecialFileSwappedInIsRefused: a path that was a regular file when
// checked and is a FIFO when opened is refused by the check on the opened
// file, without blocking (the open is non-blocking).
// Spec 14.3.4.
func TestSpecialFileSwappedInIsRefused(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "p")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		f, _, err := openNoBlock(osOps{}, p)
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		var nr *NotRegularError
		if err == nil || !errors.As(err, &nr) || nr.Kind != "named pipe" {
			t.Fatalf("openNoBlock of a FIFO: %v, want a NotRegularError naming a named pipe", err)
		}
	case <-time.After(callDeadline):
		panic("openNoBlock blocked on a FIFO")
	}
}
