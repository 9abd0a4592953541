package tools

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// recordingRunner is Local behind a log of every command it starts and
// every file access of its FS; with refuse set, it refuses them all, as a
// sandbox refuses what it does not allow.
type recordingRunner struct {
	mu     sync.Mutex
	ops    []string
	refuse bool
}

func (r *recordingRunner) do(op, path string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, op+" "+path)
	if r.refuse {
		return &fs.PathError{Op: op, Path: path, Err: fs.ErrPermission}
	}
	return nil
}

func (r *recordingRunner) log() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.ops, "\n")
}

func (r *recordingRunner) Start(c Command) (Process, error) {
	if err := r.do("start", c.Script); err != nil {
		return nil, err
	}
	return Local.Start(c)
}

func (r *recordingRunner) FS() FS { return recordingFS{r} }

type recordingFS struct{ r *recordingRunner }

func (f recordingFS) Stat(n string) (fs.FileInfo, error) {
	if err := f.r.do("stat", n); err != nil {
		return nil, err
	}
	return Local.FS().Stat(n)
}

func (f recordingFS) Lstat(n string) (fs.FileInfo, error) {
	if err := f.r.do("lstat", n); err != nil {
		return nil, err
	}
	return Local.FS().Lstat(n)
}

func (f recordingFS) Readlink(n string) (string, error) {
	if err := f.r.do("readlink", n); err != nil {
		return "", err
	}
	return Local.FS().Readlink(n)
}

func (f recordingFS) ReadDir(n string) ([]fs.DirEntry, error) {
	if err := f.r.do("readdir", n); err != nil {
		return nil, err
	}
	return Local.FS().ReadDir(n)
}

func (f recordingFS) MkdirAll(n string, perm fs.FileMode) error {
	if err := f.r.do("mkdir", n); err != nil {
		return err
	}
	return Local.FS().MkdirAll(n, perm)
}

func (f recordingFS) OpenRegular(n string) (io.ReadCloser, fs.FileInfo, error) {
	if err := f.r.do("open", n); err != nil {
		return nil, nil, err
	}
	return Local.FS().OpenRegular(n)
}

func (f recordingFS) ReplaceFile(n string, data []byte) error {
	if err := f.r.do("replace", n); err != nil {
		return err
	}
	return Local.FS().ReplaceFile(n, data)
}

// runnerCalls is one call of each tool on the workspace's a.txt, and the
// access of it the tool's Runner must record.
var runnerCalls = []struct {
	tool string
	args obj
	want string
}{
	{Read, obj{"path": "a.txt"}, "open %s/a.txt"},
	{Write, obj{"path": "b.txt", "content": "new\n"}, "replace %s/b.txt"},
	{Edit, obj{"path": "a.txt", "oldText": "alpha", "newText": "beta"}, "replace %s/a.txt"},
	{Grep, obj{"pattern": "alpha"}, "open %s/a.txt"},
	{Find, obj{"pattern": "*.txt"}, "readdir %s"},
	{Ls, obj{}, "readdir %s"},
	{Bash, obj{"command": "echo ran > c.txt"}, "start echo ran > c.txt"},
}

// The door for sandboxing: every tool starts its commands and reaches its
// files through the call's Runner, and acts as it does on Local.
func TestRunner_EveryToolActsThroughTheCallsRunner(t *testing.T) {
	for _, c := range runnerCalls {
		t.Run(c.tool, func(t *testing.T) {
			ws := workspace(t, map[string]string{"a.txt": "alpha\n"})
			ws, _ = filepath.EvalSymlinks(ws)
			rec := &recordingRunner{}
			res := call(t, Options{Workspace: ws, Confine: true, Runner: rec}, c.tool, c.args)
			mustOK(t, res)
			want := c.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, ws)
			}
			if log := rec.log(); !strings.Contains(log+"\n", want+"\n") {
				t.Fatalf("%s did not %q through its Runner; the Runner saw:\n%s", c.tool, want, log)
			}
		})
	}
}

// A Runner that refuses everything leaves every tool without a file or a
// process: each call fails, and nothing in the workspace changes.
func TestRunner_ARefusingRunnerLeavesTheToolsNothing(t *testing.T) {
	for _, c := range runnerCalls {
		t.Run(c.tool, func(t *testing.T) {
			ws := workspace(t, map[string]string{"a.txt": "alpha\n"})
			rec := &recordingRunner{refuse: true}
			res := call(t, Options{Workspace: ws, Runner: rec}, c.tool, c.args)
			if !res.IsError {
				t.Fatalf("%s succeeded with every access refused: %q", c.tool, res.Content)
			}
			if rec.log() == "" {
				t.Fatalf("%s failed without asking its Runner: %q", c.tool, res.Content)
			}
			entries, _ := os.ReadDir(ws)
			b, _ := os.ReadFile(filepath.Join(ws, "a.txt"))
			if len(entries) != 1 || string(b) != "alpha\n" {
				t.Fatalf("%s changed the workspace past its Runner: %d entries, a.txt %q", c.tool, len(entries), b)
			}
		})
	}
}

// hitRunner is Local whose commands that exit 0 report hit as a limit
// they hit (Exit.Hit), as the sandbox does when its OOM killer ended a
// child of a command that went on.
type hitRunner struct{ hit string }

func (r hitRunner) FS() FS { return Local.FS() }

func (r hitRunner) Start(c Command) (Process, error) {
	p, err := Local.Start(c)
	return hitProcess{p, r.hit}, err
}

type hitProcess struct {
	Process
	hit string
}

func (p hitProcess) Wait() (Exit, error) {
	exit, err := p.Process.Wait()
	if err == nil && exit.Code == 0 {
		exit.Hit = p.hit
	}
	return exit, err
}

// Issue 22: a limit a command hit though it exited 0 is the result's last
// line, after its output; the result stays a success with exit code 0.
func TestBash_LimitHitOnSuccessIsTheLastLine(t *testing.T) {
	hit := "memory limit of 64 MiB (tools.sandbox.memoryMB): the kernel's OOM killer ended 1 process of the command at the limit"
	o := Options{Workspace: t.TempDir(), Runner: hitRunner{hit}}
	line := "Command exited with code 0, but it hit the sandbox's " + hit
	for script, want := range map[string]string{"echo done": "done\n\n" + line, "true": line} {
		res := call(t, o, "bash", map[string]any{"command": script})
		if res.IsError || res.Content != want || res.Details["exitCode"] != 0 || res.Details["limitHit"] != hit {
			t.Errorf("%s: got %+v, want %q", script, res, want)
		}
	}
	if res := call(t, o, "bash", map[string]any{"command": "echo no; exit 3"}); !res.IsError || strings.Contains(res.Content, "hit the sandbox") {
		t.Errorf("a failed command with no Hit: %+v", res)
	}
	if res := call(t, Options{Workspace: t.TempDir()}, "bash", map[string]any{"command": "echo done"}); res.Content != "done" || res.Details["limitHit"] != nil {
		t.Errorf("without a hit: %+v", res)
	}
}
