package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/schedule"
)

// A bad schedule is refused in one line with exit code 2 before Temporal
// is dialled (nothing listens here): bad --every, bad flags (a bad cron
// expression is the server's to refuse: TestIntegration_ScheduleBadInput).
func TestCLI_ScheduleBadInput(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"schedule"}, "want a subcommand"},
		{"unknown subcommand", []string{"schedule", "edit"}, `unknown subcommand "edit"`},
		{"bad every", []string{"schedule", "create", "--id", "n", "--every", "often", "p"}, `invalid argument "often" for "--every" flag`},
		{"negative every", []string{"schedule", "create", "--id", "n", "--every", "-1h", "p"}, "invalid --every -1h0m0s"},
		{"cron and every", []string{"schedule", "create", "--id", "n", "--every", "1h", "--cron", "@daily", "p"}, "give --cron or --every, not both or neither"},
		{"no id", []string{"schedule", "create", "--every", "1h", "p"}, "missing --id"},
		{"no prompt", []string{"schedule", "create", "--id", "n", "--every", "1h"}, "missing PROMPT"},
		{"two sessions", []string{"schedule", "create", "--id", "n", "--every", "1h", "--session", "s", "--session-prefix", "p", "x"}, "give --session or --session-prefix, not both"},
		{"bad overlap", []string{"schedule", "create", "--id", "n", "--every", "1h", "--overlap", "queue", "p"}, `invalid overlap policy "queue"`},
		{"zero catchup", []string{"schedule", "create", "--id", "n", "--every", "1h", "--catchup", "0s", "p"}, "invalid --catchup 0s"},
		{"update without id", []string{"schedule", "update", "--every", "1h"}, "missing --id"},
		{"update nothing", []string{"schedule", "update", "--id", "n"}, "nothing to change: give --cron, --every"},
		{"update cron and every", []string{"schedule", "update", "--id", "n", "--cron", "@daily", "--every", "1h"}, "give --cron or --every, not both"},
		{"update short every", []string{"schedule", "update", "--id", "n", "--every", "10ms"}, "invalid --every 10ms"},
		{"update bad overlap", []string{"schedule", "update", "--id", "n", "--overlap", "queue"}, `invalid overlap policy "queue"`},
		{"update zero catchup", []string{"schedule", "update", "--id", "n", "--catchup", "0s"}, "invalid --catchup 0s"},
		{"update empty prefix", []string{"schedule", "update", "--id", "n", "--session-prefix", ""}, "invalid --session-prefix: empty"},
		{"update two sessions", []string{"schedule", "update", "--id", "n", "--session", "s", "--session-prefix", "p"}, "give --session or --session-prefix, not both"},
		{"update bad id", []string{"schedule", "update", "--id", "a/b", "--every", "1h"}, "invalid schedule id"},
		{"describe without id", []string{"schedule", "describe"}, "want exactly one argument: the schedule id"},
		{"bad id", []string{"schedule", "delete", "a/b"}, "invalid schedule id"},
	} {
		code, _, stderr := run(t, nil, tc.args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", tc.name, code, stderr, tc.want)
		}
		if n := strings.Count(stderr, "\n"); n != 1 && tc.name != "no subcommand" {
			t.Errorf("%s: %d lines on stderr, want 1: %q", tc.name, n, stderr)
		}
	}
}

// --worktree needs the workspace to be in a git repository: said in one
// line before Temporal is dialled.
func TestCLI_ScheduleWorktreeNeedsRepository(t *testing.T) {
	ws := t.TempDir()
	code, _, stderr := run(t, nil, "schedule", "create", "--id", "n", "--every", "1h", "--worktree", "--workspace", ws, "p")
	want := "workspace " + ws + " is not in a git repository: --worktree needs one"
	if code != ExitUsage || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q, want %q", code, stderr, want)
	}
}

// describe shows what a person asks of a schedule: when, the policies,
// where the prompt runs, the counts and each recent run's outcome.
func TestPrintScheduleInfo(t *testing.T) {
	at := time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)
	var b bytes.Buffer
	printScheduleInfo(&b, schedule.Info{ID: "nightly", When: `cron "0 3 * * *"`, Paused: true, Note: "maintenance",
		Overlap: "skip", CatchupWindow: "1h0m0s", SessionPrefix: "nightly", Prompt: "update\nthe deps",
		Worktree: true, Actions: 3, SkippedOverlap: 1, MissedCatchup: 2,
		Recent: []schedule.RecentRun{{ScheduledAt: at, WorkflowID: "scheduled-nightly-2026-12-04T03:00:00Z", Status: "completed", SessionID: "nightly-20261204T030000Z"}},
		Next:   []time.Time{at.Add(24 * time.Hour), at.Add(48 * time.Hour), at.Add(72 * time.Hour), at.Add(96 * time.Hour)}})
	for _, want := range []string{
		"schedule nightly (paused: maintenance)",
		`when: cron "0 3 * * *"  overlap: skip  catch-up window: 1h0m0s`,
		"session: a fresh one per run, nightly-<scheduled time, UTC>",
		"prompt: update the deps",
		"worktree: each session works in a git worktree on branch agent/<session>",
		"runs: 3 started, 1 skipped (a run was still going), 2 missed (older than the catch-up window)",
		"recent: 2026-12-04T03:00:00Z  completed scheduled-nightly-2026-12-04T03:00:00Z  session nightly-20261204T030000Z",
		"next: 2026-12-05T03:00:00Z, 2026-12-06T03:00:00Z, 2026-12-07T03:00:00Z",
	} {
		if !strings.Contains(b.String(), want+"\n") {
			t.Errorf("describe lacks %q:\n%s", want, b.String())
		}
	}
}
