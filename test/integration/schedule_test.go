package integration

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/schedule"
	"github.com/durableagent/durableagent/internal/testserver"
	"github.com/durableagent/durableagent/workflows"
)

// scheduledFixture is the history of one ScheduledPrompt run (a fresh
// session, its child prompt completed); workflows/replay_test.go replays
// it. Regenerate with UPDATE_REPLAY_HISTORY=1 go test -run
// TestIntegration_Schedule ./test/integration
var scheduledFixture = filepath.Join("..", "..", "workflows", "testdata", "scheduled_prompt_history.json")

// SPEC 16 (scheduled jobs): a schedule made with `starter schedule create
// --every 2s` fires on the embedded server; each run's prompt completes
// with the scripted model in a fresh session prefix-<scheduled time>;
// a run due while the last one (a slow model, 3 s) still runs is skipped
// under the default overlap policy and counted; pause, unpause, trigger,
// list and delete work, and a deleted schedule is a one-line error.
func TestIntegration_ScheduleFiresAndSkipsOverlap(t *testing.T) {
	e := newEnv(t)
	e.s.Scripted.LatencyMs = 3000
	e.startWorker()
	id := "sched-" + strings.ReplaceAll(e.s.Temporal.TaskQueue, "it-", "")
	m := &schedule.Manager{Client: e.c, TaskQueue: e.s.Temporal.TaskQueue}
	t.Cleanup(func() { _ = m.Delete(context.Background(), id) })

	code, out, stderr := e.starter("schedule", "create", "--id", id, "--every", "2s", "--session-prefix", "job",
		"--workspace", t.TempDir(), "update the dependencies")
	if code != cli.ExitOK || !strings.Contains(out, "schedule "+id+" created: every 2s") || !strings.Contains(out, "overlap skip, catch-up window 1h0m0s") {
		t.Fatalf("create: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	code, _, stderr = e.starter("schedule", "create", "--id", id, "--every", "2s", "again")
	if code != cli.ExitUsage || !strings.Contains(stderr, "schedule "+id+" already exists") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("create twice: exit %d, stderr %q", code, stderr)
	}

	// Two completed runs and at least one skipped: each run takes 3 s
	// (the model's latency), the schedule fires every 2 s.
	var info schedule.Info
	testserver.WaitFor(t, 90*time.Second, "two completed runs and one skipped", func() bool {
		info = e.describe(id)
		return completed(info) >= 2 && info.SkippedOverlap >= 1
	})
	if info.Overlap != "skip" || info.CatchupWindow != "1h0m0s" || info.When != "every 2s" || info.SessionPrefix != "job" || info.Prompt != "update the dependencies" {
		t.Fatalf("describe: %+v", info)
	}
	sessions := map[string]bool{}
	for _, r := range info.Recent {
		if r.Status != agent.StatusCompleted {
			continue
		}
		want := workflows.SessionAt("job", r.ScheduledAt)
		if r.SessionID != want || !strings.HasPrefix(r.WorkflowID, schedule.ActionIDPrefix+id+"-") {
			t.Fatalf("run %+v: want session %s and workflow %s%s-…", r, want, schedule.ActionIDPrefix, id)
		}
		sessions[r.SessionID] = true
		evs := e.events(r.SessionID)
		if last := evs[len(evs)-1]; last.Type != agent.EventPromptEnd || last.Status != agent.StatusCompleted {
			t.Fatalf("session %s ends with %+v, want a completed prompt", r.SessionID, last)
		}
	}
	if len(sessions) < 2 {
		t.Fatalf("completed runs share sessions: %v", sessions)
	}
	for _, r := range info.Recent {
		if r.Status == agent.StatusCompleted {
			exportAndReplay(t, e, r.WorkflowID, r.RunID, scheduledFixture)
			break
		}
	}
	code, out, _ = e.starter("schedule", "describe", id)
	if code != cli.ExitOK || !strings.Contains(out, "overlap: skip") || !strings.Contains(out, "skipped (a run was still going)") ||
		!strings.Contains(out, "session: a fresh one per run, job-<scheduled time, UTC>") {
		t.Fatalf("describe text: exit %d\n%s", code, out)
	}

	// pause stops it (the note shows), unpause and trigger start a run.
	if code, out, stderr = e.starter("schedule", "pause", id, "--note", "maintenance"); code != cli.ExitOK || !strings.Contains(out, "schedule "+id+" paused") {
		t.Fatalf("pause: exit %d %s %s", code, out, stderr)
	}
	if info = e.describe(id); !info.Paused || info.Note != "maintenance" {
		t.Fatalf("paused schedule described as %+v", info)
	}
	if code, _, stderr = e.starter("schedule", "unpause", id); code != cli.ExitOK {
		t.Fatalf("unpause: exit %d %s", code, stderr)
	}
	if info = e.describe(id); info.Paused {
		t.Fatalf("unpaused schedule still paused: %+v", info)
	}
	testserver.WaitFor(t, 30*time.Second, "the schedule in the list", func() bool {
		code, out, _ = e.starter("schedule", "list")
		return code == cli.ExitOK && strings.Contains(out, id) && strings.Contains(out, "every 2s")
	})
	if code, out, stderr = e.starter("schedule", "trigger", id); code != cli.ExitOK || !strings.Contains(out, "triggered") {
		t.Fatalf("trigger: exit %d %s %s", code, out, stderr)
	}
	if code, out, stderr = e.starter("schedule", "delete", id); code != cli.ExitOK || !strings.Contains(out, "schedule "+id+" deleted") {
		t.Fatalf("delete: exit %d %s %s", code, out, stderr)
	}
	code, _, stderr = e.starter("schedule", "describe", id)
	if code != cli.ExitUsage || !strings.Contains(stderr, "schedule not found") || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("describe deleted: exit %d, stderr %q", code, stderr)
	}
}

// SPEC 16 (busy session): a schedule on one named session whose prompt is
// still running when the next run is due (overlap allow-all lets the run
// start) skips that run with a "busy" result, and the session's prompt
// is not disturbed.
func TestIntegration_ScheduleNamedSessionBusy(t *testing.T) {
	e := newEnv(t)
	e.s.Scripted.LatencyMs = 4000
	e.startWorker()
	id := "busy-" + strings.ReplaceAll(e.s.Temporal.TaskQueue, "it-", "")
	m := &schedule.Manager{Client: e.c, TaskQueue: e.s.Temporal.TaskQueue}
	t.Cleanup(func() { _ = m.Delete(context.Background(), id) })
	code, out, stderr := e.starter("schedule", "create", "--id", id, "--every", "2s", "--session", "nightly",
		"--overlap", "allow-all", "--workspace", t.TempDir(), "run the checks")
	if code != cli.ExitOK || !strings.Contains(out, "session nightly") {
		t.Fatalf("create: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	var info schedule.Info
	testserver.WaitFor(t, 90*time.Second, "a completed run and a busy one", func() bool {
		info = e.describe(id)
		return completed(info) >= 1 && count(info, workflows.ScheduledStatusSkipped) >= 1
	})
	for _, r := range info.Recent {
		if r.SessionID != "" && r.SessionID != "nightly" {
			t.Fatalf("run %+v not in session nightly", r)
		}
	}
	code, out, _ = e.starter("schedule", "describe", id)
	if code != cli.ExitOK || !strings.Contains(out, "skipped") || !strings.Contains(out, "session nightly") {
		t.Fatalf("describe: exit %d\n%s", code, out)
	}
}

// Issue 25: a schedule made with --worktree gives each run's fresh session
// a worktree of the repository on its own branch; the run's prompt_end
// names the branch, and the repository's checkout is untouched.
func TestIntegration_ScheduleWorktree(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	repo := gitRepo(t)
	id := "wt-" + strings.ReplaceAll(e.s.Temporal.TaskQueue, "it-", "")
	m := &schedule.Manager{Client: e.c, TaskQueue: e.s.Temporal.TaskQueue}
	t.Cleanup(func() { _ = m.Delete(context.Background(), id) })
	code, out, stderr := e.starter("schedule", "create", "--id", id, "--every", "1h", "--session-prefix", "nightly",
		"--worktree", "--workspace", repo, "tidy the repository")
	if code != cli.ExitOK || !strings.Contains(out, "in a worktree on branch agent/<session>") {
		t.Fatalf("create: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	if code, out, stderr = e.starter("schedule", "trigger", id); code != cli.ExitOK {
		t.Fatalf("trigger: exit %d %s %s", code, out, stderr)
	}
	var info schedule.Info
	testserver.WaitFor(t, 60*time.Second, "a completed run", func() bool {
		info = e.describe(id)
		return completed(info) >= 1
	})
	if !info.Worktree {
		t.Fatalf("describe: %+v, want worktree", info)
	}
	for _, r := range info.Recent {
		if r.Status != agent.StatusCompleted {
			continue
		}
		evs := e.events(r.SessionID)
		end := evs[len(evs)-1]
		if end.Type != agent.EventPromptEnd || end.Worktree == nil || end.Worktree.Branch != "agent/"+r.SessionID {
			t.Fatalf("run %s ends with %+v, want prompt_end naming branch agent/%s", r.SessionID, end, r.SessionID)
		}
		if got := gitIn(t, repo, "branch", "--list", "agent/"+r.SessionID); got == "" {
			t.Fatalf("no branch agent/%s in the repository", r.SessionID)
		}
	}
	if st := gitIn(t, repo, "status", "--porcelain"); st != "" {
		t.Fatalf("the repository's checkout changed: %q", st)
	}
}

// Bad schedules are refused in one line with exit code 2 and nothing is
// created.
func TestIntegration_ScheduleBadInput(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		// The server checks a cron expression; its reason is the error.
		{[]string{"--cron", "0 25 * * *"}, `invalid --cron "0 25 * * *": Hour is not in range [0-23]`},
		{[]string{"--cron", "every day"}, `invalid --cron "every day": CronString does not have 5-7 fields`},
		{[]string{"--cron", "0 3 32 * *"}, "DayOfMonth is not in range [1-31]"},
		{[]string{"--cron", "CRON_TZ=Mars/Olympus 0 3 * * *"}, "unknown time zone Mars/Olympus"},
		{[]string{"--cron", "@every soon"}, `invalid duration "soon"`},
		{[]string{"--every", "2x"}, `invalid argument "2x" for "--every" flag`},
		{[]string{"--every", "0s"}, "invalid --every 0s"},
		{[]string{"--every", "1h", "--overlap", "sometimes"}, `invalid overlap policy "sometimes"`},
	} {
		args := append([]string{"schedule", "create", "--id", "bad"}, tc.args...)
		code, _, stderr := e.starter(append(args, "a prompt")...)
		if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q, want one line with %q", tc.args, code, stderr, tc.want)
		}
	}
	if code, _, stderr := e.starter("schedule", "describe", "bad"); code != cli.ExitUsage || !strings.Contains(stderr, "schedule not found") {
		t.Fatalf("nothing was created, yet: exit %d %q", code, stderr)
	}
}

// describe is `starter schedule describe ID --json`.
func (e *env) describe(id string) schedule.Info {
	e.t.Helper()
	code, out, stderr := e.starter("schedule", "describe", id, "--json")
	if code != cli.ExitOK {
		e.t.Fatalf("describe %s: exit %d %s", id, code, stderr)
	}
	var info schedule.Info
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		e.t.Fatalf("describe %s: %v\n%s", id, err, out)
	}
	return info
}

func completed(info schedule.Info) int { return count(info, agent.StatusCompleted) }

func count(info schedule.Info, status string) int {
	n := 0
	for _, r := range info.Recent {
		if r.Status == status {
			n++
		}
	}
	return n
}

// Issue 25, spec 16 (Update): `starter schedule update` changes a schedule in place with the
// SDK's read-modify-write: when it fires, the policies, the prompt and
// where its runs go change, it stays paused with its note, and the next
// run starts the new prompt in a session of the new prefix; a cron
// expression shows as given in describe and list; an update that changes
// nothing says so; an unknown id, a bad cron and a worktree without a
// repository are one-line errors.
func TestIntegration_ScheduleUpdate(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	id := "upd-" + strings.ReplaceAll(e.s.Temporal.TaskQueue, "it-", "")
	m := &schedule.Manager{Client: e.c, TaskQueue: e.s.Temporal.TaskQueue}
	t.Cleanup(func() { _ = m.Delete(context.Background(), id) })
	ws := t.TempDir()
	if code, out, stderr := e.starter("schedule", "create", "--id", id, "--every", "1h", "--session-prefix", "job",
		"--workspace", ws, "the first prompt"); code != cli.ExitOK {
		t.Fatalf("create: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	if code, _, stderr := e.starter("schedule", "pause", id, "--note", "reworking it"); code != cli.ExitOK {
		t.Fatalf("pause: exit %d %s", code, stderr)
	}

	code, out, stderr := e.starter("schedule", "update", "--id", id, "--every", "2s", "--overlap", "allow-all",
		"--catchup", "2h", "--session-prefix", "upd", "the second prompt")
	if code != cli.ExitOK {
		t.Fatalf("update: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	for _, want := range []string{"schedule " + id + " updated: ", "when: every 1h0m0s -> every 2s", "overlap: skip -> allow-all",
		"catch-up window: 1h0m0s -> 2h0m0s", `prompt: "the second prompt"`, "session: fresh sessions job-<scheduled time> -> fresh sessions upd-<scheduled time>"} {
		if !strings.Contains(out, want) {
			t.Errorf("update says %q, want %q", out, want)
		}
	}
	info := e.describe(id)
	if info.When != "every 2s" || info.Overlap != "allow-all" || info.CatchupWindow != "2h0m0s" || info.SessionPrefix != "upd" ||
		info.Prompt != "the second prompt" || !info.Paused || info.Note != "reworking it" || info.Actions != 0 {
		t.Fatalf("after update: %+v", info)
	}

	// Unpaused, it fires every 2 s with the new prompt in upd-… sessions.
	if code, _, stderr := e.starter("schedule", "unpause", id); code != cli.ExitOK {
		t.Fatalf("unpause: exit %d %s", code, stderr)
	}
	testserver.WaitFor(t, 60*time.Second, "a completed run of the updated schedule", func() bool {
		info = e.describe(id)
		return completed(info) >= 1
	})
	if code, _, stderr := e.starter("schedule", "pause", id); code != cli.ExitOK {
		t.Fatalf("pause: exit %d %s", code, stderr)
	}
	for _, r := range info.Recent {
		if r.Status != agent.StatusCompleted {
			continue
		}
		if want := workflows.SessionAt("upd", r.ScheduledAt); r.SessionID != want {
			t.Fatalf("run %+v, want session %s", r, want)
		}
		var users []string
		for _, ev := range e.events(r.SessionID) {
			if ev.Type == agent.EventMessageEnd && ev.Message != nil && ev.Message.Role == agent.RoleUser {
				users = append(users, ev.Message.Text())
			}
		}
		if len(users) != 1 || users[0] != "the second prompt" {
			t.Fatalf("run %s was prompted %q, want the updated prompt", r.SessionID, users)
		}
	}

	// A cron expression is shown as given, by describe and list.
	if code, out, stderr = e.starter("schedule", "update", "--id", id, "--cron", "0 4 * * *"); code != cli.ExitOK ||
		!strings.Contains(out, `when: every 2s -> cron "0 4 * * *"`) {
		t.Fatalf("update cron: exit %d\nstdout %s\nstderr %s", code, out, stderr)
	}
	info = e.describe(id)
	if info.When != `cron "0 4 * * *"` || len(info.Next) == 0 || info.Next[0].UTC().Hour() != 4 || info.Next[0].Minute() != 0 {
		t.Fatalf("after cron update: when %q next %v", info.When, info.Next)
	}
	testserver.WaitFor(t, 30*time.Second, "the updated schedule in the list", func() bool {
		code, out, _ = e.starter("schedule", "list")
		return code == cli.ExitOK && strings.Contains(out, id) && strings.Contains(out, `cron "0 4 * * *"`)
	})
	if code, out, _ = e.starter("schedule", "update", "--id", id, "--cron", "0 4 * * *", "--overlap", "allow-all"); code != cli.ExitOK ||
		!strings.Contains(out, "schedule "+id+" unchanged") {
		t.Fatalf("an update that changes nothing: exit %d %s", code, out)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--id", "no-such-schedule", "--every", "1h"}, "update no-such-schedule: schedule not found"},
		{[]string{"--id", id, "--cron", "0 4 * * SOMEDAY"}, `invalid --cron "0 4 * * SOMEDAY": DayOfWeek is not in range [0-7]`},
		{[]string{"--id", id, "--worktree"}, "workspace " + ws + " is not in a git repository: --worktree needs one"},
	} {
		code, _, stderr := e.starter(append([]string{"schedule", "update"}, tc.args...)...)
		if code != cli.ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("update %v: exit %d, stderr %q, want one line with %q", tc.args, code, stderr, tc.want)
		}
	}
	if info = e.describe(id); info.Worktree || info.Prompt != "the second prompt" {
		t.Fatalf("a refused update changed the schedule: %+v", info)
	}
}
