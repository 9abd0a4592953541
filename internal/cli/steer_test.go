package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
)

// Issue 12: steer, follow-up and approve fail like the other signal
// commands: one line on stderr, exit 2 (bad arguments, no Temporal).
func TestCLI_SteerFollowUpApproveErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"steer without message", []string{"steer", "--session", "s1"}, "starter steer: missing MESSAGE"},
		{"follow-up without message", []string{"follow-up", "  "}, "starter follow-up: missing MESSAGE"},
		{"approve without id", []string{"approve", "--deny"}, "starter approve: want exactly one TOOLCALLID"},
		{"approve with two ids", []string{"approve", "a", "b"}, "want exactly one TOOLCALLID"},
		{"steer unreachable", []string{"steer", "--session", "s1", "look at main.go"}, "cannot reach Temporal at 127.0.0.1:1"},
		{"approve unreachable", []string{"approve", "--session", "s1", "call_1_0", "--deny", "--reason", "no"}, "cannot reach Temporal at 127.0.0.1:1"},
		{"queue with a stray word", []string{"queue", "promote"}, "starter queue: wrong arguments (usage: starter queue"},
		{"queue edit without text or kind", []string{"queue", "edit", "m1"}, "starter queue: wrong arguments"},
		{"queue rm without id", []string{"queue", "rm"}, "starter queue: wrong arguments"},
		{"queue clear with an id", []string{"queue", "clear", "m1"}, "starter queue: wrong arguments"},
		{"approve for the session with --deny", []string{"approve", "--for-session", "--deny", "call_1_0"}, "starter approve: --for-session allows calls: it does not go with --deny"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, nil, tc.args...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Fatalf("exit %d stderr %q, want exit %d and one line with %q", code, stderr, ExitUsage, tc.want)
			}
		})
	}
}

// Issue 12: `starter state` without --json shows what the prompt waits
// for: queued messages, running tools, its host, the retry's wake-up and
// each pending approval with its arguments (a command as written, issue
// 39 item 7) and the command that decides it.
func TestPrintState_WhatThePromptWaitsFor(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	expires := now.Add(90 * time.Second)
	for _, tc := range []struct {
		name string
		st   agent.State
		want []string
		not  []string
	}{
		{"idle", agent.State{SessionID: "s1", Status: "idle", Provider: "scripted", Model: "m"},
			[]string{"session s1  status idle  model scripted/m", "pendingMessageCount 0\n"},
			[]string{"pending retry", "running tools", "waiting for", "warning"}},
		// Issue 15 item 2: what the session reader skipped is shown.
		{"warnings", agent.State{SessionID: "s1", Status: agent.StatusCompleted, Provider: "scripted", Model: "m",
			Warnings: []string{"line 3: not JSON, skipped", "line 9: incomplete last line (9 bytes without a newline that are not valid JSON, left by an interrupted write), ignored"}},
			[]string{"session file warning: line 3: not JSON, skipped\n", "session file warning: line 9: incomplete last line"}, nil},
		{"waiting", agent.State{SessionID: "s1", Status: agent.StatusRunning, PendingMessageCount: 2,
			SteeringMode: agent.QueueModeOneAtATime, FollowUpMode: agent.QueueModeAll,
			PendingRetry:   &agent.PendingRetry{Attempt: 2, MaxAttempts: 3, WakeAt: now.Add(4 * time.Second)},
			RunningTools:   []string{"read call_1_0"},
			WaitingForHost: "build-box",
			PendingApprovals: []agent.PendingApproval{{ToolCallID: "call_1_1", ToolName: "bash", Args: json.RawMessage(`{"command": "rm -rf build \u003e log"}`), ExpiresAt: &expires,
				Why: `rule 1 "ask bash prefix:rm"`}},
			ToolDecisions: []agent.ToolDecision{{ToolCallID: "call_1_0", ToolName: "read", Policy: "allow", Why: `rule 2 "allow read"`}}},
			[]string{
				"pending retry 2/3: wakes at " + now.Add(4*time.Second).Local().Format("15:04:05.000") + " (in 4s)",
				"pendingMessageCount 2  steeringMode one-at-a-time  followUpMode all",
				"running tools: read call_1_0",
				"waiting for host build-box",
				`waiting for approval: bash rm -rf build > log (call_1_1) (denied at ` + expires.Local().Format("15:04:05") + " unless decided)",
				` unless decided) (asked by rule 1 "ask bash prefix:rm")`,
				"  starter approve --session s1 call_1_1 [--deny --reason TEXT] [--for-session]",
				`policy: allow read call_1_0 by rule 2 "allow read"`,
			}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			printState(&b, tc.st, now)
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
			for _, n := range tc.not {
				if strings.Contains(b.String(), n) {
					t.Errorf("output has %q:\n%s", n, b.String())
				}
			}
		})
	}
}
