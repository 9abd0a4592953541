package activities

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/durableagent/durableagent/internal/tools"
)

// The files a bash command changed while it ran, for the account of a
// sub-agent that works in its parent's workspace (docs/spec.md 17.9): a
// bounded `git status` snapshot before and after the command, through
// the call's runner, compared path by path.
//
// It stays beside the turn checkpoints (checkpoint.go) because it answers
// another question: what changed while this one command ran, in a
// workspace that the parent and sibling sub-agents change at the same
// time. A checkpoint is taken once per turn, before all of the turn's
// calls, so its changes mix this command's with the turn's other calls'
// and with concurrent sub-agents'; one per bash call would break "one
// small activity per turn" and put a store write around every command.

const (
	bashFilesTimeout    = 2 * time.Second
	bashFilesMaxEntries = 10_000
	bashFilesMaxOutput  = 4 << 20
	// bashFilesScript prints the workspace's path in its repository, a
	// line, then its status entries (NUL-terminated "XY path"). Optional
	// locks off: git status does not write the index it reads.
	bashFilesScript = `git rev-parse --show-prefix && git status --porcelain=v1 -z --untracked-files=all --no-renames -- .`
)

// fileMark is what a snapshot knows of a path.
type fileMark struct {
	status string
	size   int64
	mtime  int64
	exists bool
}

// workspaceSnapshot is one `git status` of a workspace, by path relative
// to it (nil marks: not taken, note says why).
type workspaceSnapshot struct {
	marks map[string]fileMark
	note  string
}

// snapshotWorkspace takes a snapshot of workspace through runner.
func snapshotWorkspace(ctx context.Context, runner tools.Runner, env []string, workspace string) workspaceSnapshot {
	out := &cappedBuffer{max: bashFilesMaxOutput}
	p, err := runner.Start(tools.Command{Script: bashFilesScript, Dir: workspace,
		Env: append(slices.Clone(env), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C"), Output: out})
	if err != nil {
		return workspaceSnapshot{note: "git status did not start: " + err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, bashFilesTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, p.Kill)
	exit, err := p.Wait()
	stop()
	switch {
	case ctx.Err() != nil:
		return workspaceSnapshot{note: fmt.Sprintf("git status took over %s", bashFilesTimeout)}
	case err != nil:
		return workspaceSnapshot{note: "git status: " + err.Error()}
	case exit.Code == 127:
		return workspaceSnapshot{note: "git is not installed where the command runs"}
	case exit.Code != 0:
		return workspaceSnapshot{note: "the workspace is not in a git repository"}
	case out.over:
		return workspaceSnapshot{note: "git status printed over 4 MiB"}
	}
	prefix, entries, ok := strings.Cut(out.String(), "\n")
	if !ok {
		return workspaceSnapshot{note: "git status printed no status"}
	}
	list := strings.Split(strings.TrimSuffix(entries, "\x00"), "\x00")
	if len(list) > bashFilesMaxEntries {
		return workspaceSnapshot{note: fmt.Sprintf("git status lists over %d paths", bashFilesMaxEntries)}
	}
	s := workspaceSnapshot{marks: map[string]fileMark{}}
	for _, e := range list {
		if len(e) < 4 {
			continue
		}
		rel := strings.TrimPrefix(e[3:], prefix)
		m := fileMark{status: e[:2]}
		if fi, err := runner.FS().Lstat(filepath.Join(workspace, rel)); err == nil {
			m.size, m.mtime, m.exists = fi.Size(), fi.ModTime().UnixNano(), true
		}
		s.marks[rel] = m
	}
	return s
}

// changedSince lists the paths whose mark differs between before and
// after (sorted), at most MaxBashFiles, with the count of the rest, or
// why it cannot.
func (after workspaceSnapshot) changedSince(before workspaceSnapshot) (files []string, more int, note string) {
	if before.marks == nil || after.marks == nil {
		return nil, 0, cmp.Or(before.note, after.note)
	}
	var all []string
	for p, m := range after.marks {
		if b, ok := before.marks[p]; !ok || b != m {
			all = append(all, p)
		}
	}
	for p := range before.marks {
		if _, ok := after.marks[p]; !ok {
			all = append(all, p) // reverted, committed or deleted
		}
	}
	slices.Sort(all)
	if len(all) > MaxBashFiles {
		return all[:MaxBashFiles], len(all) - MaxBashFiles, ""
	}
	return all, 0, ""
}

// MaxBashFiles bounds RunToolResult.Files of a bash call.
const MaxBashFiles = 50

// cappedBuffer keeps at most max bytes and says when it dropped some.
type cappedBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int
	over bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.buf.Len()+len(p) > c.max {
		c.over = true
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// bashEnv is the environment of the snapshot's git: the tools' scrubbed
// environment.
func (a *Activities) bashEnv() []string { return tools.ScrubEnv(os.Environ(), a.ToolPolicy.EnvAllow) }
