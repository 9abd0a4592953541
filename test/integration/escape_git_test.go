package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/api/serviceerror"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/workflows"
)

// Issue 37's escapes through git, with a real worker and real bubblewrap
// (as root, as CI runs them).

// bashCalls runs cmds as the scripted model's bash calls, one per turn,
// in a new session in workspace (a --worktree session of it with
// worktree), and returns each call's result text and the prompt's end.
func bashCalls(t *testing.T, e *env, session, workspace string, worktree bool, cmds ...string) ([]string, workflows.PromptResult) {
	t.Helper()
	in := client.PromptInput(e.s, session, "run them")
	in.Workspace = workspace
	if worktree {
		in.Worktree = activities.WorktreeRequired
	}
	for _, c := range cmds {
		args, _ := json.Marshal(map[string]any{"command": c, "timeout": 60})
		in.Model.Faults = append(in.Model.Faults, "tool:bash "+string(args))
	}
	in.Model.Faults = append(in.Model.Faults, "text:done")
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.result(run)
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt %s: %+v %v", session, res, err)
	}
	var outs []string
	for _, ev := range e.events(session) {
		if ev.Type == agent.EventToolExecutionEnd && ev.ToolResult != nil {
			var out string
			for _, b := range ev.ToolResult.Content {
				out += b.Text
			}
			outs = append(outs, out)
		}
	}
	if len(outs) != len(cmds) {
		t.Fatalf("prompt %s: %d tool results, want %d: %q", session, len(outs), len(cmds), outs)
	}
	return outs, res
}

// Issue 37, 1: a .git file the model writes (gitdir: /etc, gitdir: the
// worker's data dir) binds nothing into the next sandbox, in a plain
// workspace and in a --worktree session's; the worktree session still
// commits on its branch (its git directory comes from the worker's own
// record).
func TestEscape_GitFileBindsNothing(t *testing.T) {
	e := sandboxEnv(t)
	const authMark = "auth-mark-Zr8Qw"
	if err := os.WriteFile(filepath.Join(e.dataDir, "auth.json"), []byte(`{"mark":"`+authMark+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e.startWorker()
	planted := filepath.Join("/etc", "planted-"+filepath.Base(t.TempDir()))
	t.Cleanup(func() { os.Remove(planted) })
	probe := fmt.Sprintf(`head -c 1 /etc/shadow >/dev/null 2>&1 && echo SHADOW-READ; touch %s 2>/dev/null; grep -o 'auth-mark-.....' %s/auth.json 2>/dev/null; echo END-OF-CALL`, planted, e.dataDir)
	repo := gitRepo(t)
	for _, c := range []struct {
		session, workspace string
		worktree           bool
	}{{"esc-plain", t.TempDir(), false}, {"esc-wt", repo, true}} {
		for i, target := range []string{"/etc", e.dataDir} {
			session := fmt.Sprintf("%s-%d", c.session, i)
			outs, _ := bashCalls(t, e, session, c.workspace, c.worktree,
				fmt.Sprintf(`printf 'gitdir: %s\n' > .git && cat .git`, target), probe)
			if !strings.Contains(outs[0], "gitdir: "+target) || !strings.Contains(outs[1], "END-OF-CALL") {
				t.Fatalf("%s: the calls did not run: %q", session, outs)
			}
			if strings.Contains(outs[1], "SHADOW-READ") || strings.Contains(outs[1], authMark) {
				t.Errorf("%s: .git naming %s let the next call read the host: %s", session, target, outs[1])
			}
			if _, err := os.Stat(planted); err == nil {
				t.Errorf("%s: .git naming %s let the next call write %s on the host", session, target, planted)
				os.Remove(planted)
			}
		}
	}

	// The worktree whose .git the model rewrote is deleted all the same.
	wt := filepath.Join(e.dataDir, "worktrees", "esc-wt-0")
	if code, out, stderr := e.starter("session", "delete", "--session", "esc-wt-0", "--force"); code != cli.ExitOK || !strings.Contains(out, "removed its worktree "+wt) {
		t.Fatalf("delete --force of the worktree with a rewritten .git: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	if _, err := os.Stat(wt); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("worktree %s after delete: %v", wt, err)
	}

	// A --worktree session commits on its branch from the sandbox.
	outs, res := bashCalls(t, e, "esc-commit", repo, true,
		`echo changed > a.txt && git -c user.name=agent -c user.email=agent@example.com commit -qam 'agent commit' && echo COMMITTED`)
	if !strings.Contains(outs[0], "COMMITTED") {
		t.Fatalf("commit in the worktree's sandbox: %s", outs[0])
	}
	if got := gitIn(t, repo, "log", "--format=%s", "-1", "agent/esc-commit"); got != "agent commit" {
		t.Fatalf("branch agent/esc-commit's last commit is %q", got)
	}
	if res.Worktree == nil || res.Worktree.Commits != 1 {
		t.Fatalf("prompt end's branch summary %+v, want 1 commit", res.Worktree)
	}
}

// Issue 37, 2: from inside a --worktree sandbox the model plants a clean
// filter for every file (.git/config and .gitattributes) and an fsmonitor
// hook, each of which would write a marker outside the workspace. The
// worker's git at the prompt's end (the branch summary), starter diff and
// session delete's check run neither on the host; the summary, the diff
// and the check are still right.
func TestEscape_GitConfigRunsNothingOnTheHost(t *testing.T) {
	e := sandboxEnv(t)
	e.startWorker()
	repo := gitRepo(t)
	marks := t.TempDir()
	clean, fsmon := filepath.Join(marks, "clean-ran"), filepath.Join(marks, "fsmonitor-ran")
	plant := fmt.Sprintf(`git config filter.x.clean 'sh -c "touch %s; cat"' && echo '* filter=x' > .gitattributes && `+
		`printf '#!/bin/sh\ntouch %s\n' > "$PWD/fsm.sh" && chmod +x fsm.sh && git config core.fsmonitor "$PWD/fsm.sh" && `+
		`echo changed > a.txt && echo fresh > new.txt && echo PLANTED`, clean, fsmon)
	outs, res := bashCalls(t, e, "esc-filter", repo, true, plant)
	if !strings.Contains(outs[0], "PLANTED") {
		t.Fatalf("the model's call did not plant the filter: %s", outs[0])
	}
	code, diff, stderr := e.starter("diff", "--session", "esc-filter")
	// The delete's check for unsaved work reads the worktree too.
	if code, _, stderr := e.starter("session", "delete", "--session", "esc-filter"); code == cli.ExitOK || !strings.Contains(stderr, "uncommitted changes in 4 files") {
		t.Errorf("delete without --force: exit %d, stderr %q", code, stderr)
	}
	for _, m := range []string{clean, fsmon} {
		if _, err := os.Stat(m); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a command the model planted in the repository ran on the host: %s exists (%v)", m, err)
		}
	}
	if res.Worktree == nil || res.Worktree.Uncommitted != 4 || res.Worktree.Commits != 0 {
		t.Errorf("prompt end's branch summary %+v, want 4 uncommitted files (a.txt, new.txt, .gitattributes, fsm.sh)", res.Worktree)
	}
	if code != cli.ExitOK || !strings.Contains(diff, "-base") || !strings.Contains(diff, "+changed") || !strings.Contains(diff, "+fresh") {
		t.Errorf("starter diff: exit %d\nstdout %s\nstderr %s", code, diff, stderr)
	}
}

// Issue 37, 10: a --worktree session id that git refuses as a branch
// name is refused in one line, before any workflow starts.
func TestWorktree_SessionIDThatIsNoBranchIsRefused(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	repo := gitRepo(t)
	for _, id := range []string{"a..b", "a.lock", "job."} {
		code, _, stderr := e.starter("prompt", "--session", id, "--worktree", "--workspace", repo, "hi")
		if code != cli.ExitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, fmt.Sprintf("session id %q cannot name a git branch", id)) {
			t.Errorf("--worktree --session %s: exit %d, stderr %q", id, code, stderr)
		}
		_, err := e.c.DescribeWorkflowExecution(context.Background(), workflows.WorkflowID(id), "")
		var nf *serviceerror.NotFound
		if !errors.As(err, &nf) {
			t.Errorf("--session %s: a workflow started (describe: %v)", id, err)
		}
	}
}
