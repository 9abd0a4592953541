package toolview

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
)

// Issue 12: `starter state` without --json (and the terminal UI's /state) shows what the prompt waits
// for: queued messages, running tools, its host, the retry's wake-up and
// each pending approval with its arguments (a command as written, issue
// 39 item 7) and the command that decides it.
func TestWriteState_WhatThePromptWaitsFor(t *testing.T) {
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
			WriteState(&b, tc.st, now)
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
