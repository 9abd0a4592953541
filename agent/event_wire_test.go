package agent

import (
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
	"time"
)

var updateWire = flag.Bool("update-wire", false, "rewrite testdata/events.jsonl from the current MarshalJSON")

// wireEvents are events of every type, empty and with every field set,
// whose JSON testdata/events.jsonl holds as clients read it.
func wireEvents() []Event {
	types := []string{EventAutoRetryStart, EventAutoRetryEnd, EventAgentStart, EventAgentEnd,
		EventMessageStart, EventMessageEnd, EventMessageUpdate, EventTurnStart, EventTurnEnd,
		EventToolExecutionStart, EventToolApprovalRequest, EventToolExecutionUpdate, EventToolExecutionEnd,
		EventAutoCompactionStart, EventSessionSettings, EventAutoCompactionEnd, EventPromptEnd, EventUsage,
		EventSubAgentStart, EventSubAgentEnd, EventQueueChanged}
	msg := TextMessage(RoleAssistant, "hi <b> & you")
	full := Event{Seq: 7, Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		Attempt: 2, MaxAttempts: 3, DelayMs: 1500, Success: true, FinalError: "final", ErrorMessage: "err",
		WillRetry: true, StopReason: StopReasonToolUse, Messages: []Message{msg},
		EntryID: "e1", Message: &msg, Reason: "overflow",
		Result:  &CompactionResult{Summary: "s", FirstKeptEntryID: "k", TokensBefore: 9, EntryID: "c"},
		Aborted: true, Status: StatusFailed, Undelivered: []string{"u"},
		UndeliveredMessages: []UndeliveredMessage{{Kind: SignalSteer, Text: "u", Reason: "r"}},
		Worktree:            &BranchSummary{Branch: "b", Base: "x", Commits: 1, Text: "t"},
		ToolCallID:          "c1", ToolName: "bash", Args: json.RawMessage(`{"command":"ls"}`),
		ToolResult:    &ToolResult{Content: []ContentBlock{{Type: BlockText, Text: "out"}}, Details: map[string]any{"truncated": true}},
		PartialResult: &ToolResult{Content: []ContentBlock{{Type: BlockText, Text: "part"}}},
		IsError:       true, Policy: "ask", Why: "rule 1", SessionScope: "bash ls",
		ToolResults:           []Message{{Role: RoleToolResult, ToolCallID: "c1", Content: []ContentBlock{{Type: BlockText, Text: "r"}}}},
		AssistantMessageEvent: &AssistantMessageEvent{Type: DeltaText, Delta: "d"},
		Turn:                  4, SessionID: "s2",
		Usage:  &Spend{Input: 1, Output: 2, CostUsd: 0.5},
		Budget: &Budget{Limits: BudgetLimits{MaxTokens: 10}},
	}
	var out []Event
	for _, t := range types {
		f := full
		f.Type = t
		out = append(out, Event{Type: t}, f)
		// Edge cases: an empty non-nil list, arguments that are not JSON.
		f.Messages, f.ToolResults, f.Args = []Message{}, []Message{}, json.RawMessage(`{bad`)
		f.Undelivered, f.UndeliveredMessages = []string{}, []UndeliveredMessage{}
		out = append(out, f)
	}
	return out
}

// TestEventWire: every event type's JSON is the shape clients read
// (SPEC section 10), byte for byte.
func TestEventWire(t *testing.T) {
	var lines []string
	for _, e := range wireEvents() {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("marshal %s: %v", e.Type, err)
		}
		lines = append(lines, string(b))
	}
	got := strings.Join(lines, "\n") + "\n"
	const golden = "testdata/events.jsonl"
	if *updateWire {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
	if len(wl) != len(gl) {
		t.Fatalf("%d lines, want %d", len(gl), len(wl))
	}
	for i := range wl {
		if wl[i] != gl[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, gl[i], wl[i])
		}
	}
}
