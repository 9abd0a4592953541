package agent

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// SPEC 10: each event type marshals to exactly its documented fields
// (plus type, seq and time), and reads back unchanged.
func TestEvent_JSONShapes(t *testing.T) {
	at := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		ev   Event
		want string
	}{
		{"auto_retry_start", Event{Type: EventAutoRetryStart, Seq: 4, Time: at, Attempt: 1, MaxAttempts: 3, DelayMs: 2000, ErrorMessage: "503 Service Unavailable", WillRetry: true},
			`{"type":"auto_retry_start","seq":4,"time":"2026-12-02T09:00:00Z","attempt":1,"maxAttempts":3,"delayMs":2000,"errorMessage":"503 Service Unavailable"}`},
		{"auto_retry_end success", Event{Type: EventAutoRetryEnd, Seq: 9, Time: at, Success: true, Attempt: 2},
			`{"type":"auto_retry_end","seq":9,"time":"2026-12-02T09:00:00Z","success":true,"attempt":2}`},
		{"auto_retry_end failure", Event{Type: EventAutoRetryEnd, Seq: 9, Time: at, Attempt: 3, FinalError: "503 Service Unavailable"},
			`{"type":"auto_retry_end","seq":9,"time":"2026-12-02T09:00:00Z","success":false,"attempt":3,"finalError":"503 Service Unavailable"}`},
		{"agent_end", Event{Type: EventAgentEnd, Seq: 3, Time: at, WillRetry: false, StopReason: StopReasonStop},
			`{"type":"agent_end","seq":3,"time":"2026-12-02T09:00:00Z","willRetry":false,"stopReason":"stop"}`},
		{"auto_compaction_start", Event{Type: EventAutoCompactionStart, Seq: 1, Time: at, Reason: "overflow"},
			`{"type":"auto_compaction_start","seq":1,"time":"2026-12-02T09:00:00Z","reason":"overflow"}`},
		{"auto_compaction_end", Event{Type: EventAutoCompactionEnd, Seq: 2, Time: at, WillRetry: true, Result: &CompactionResult{Summary: "s", FirstKeptEntryID: "e1", TokensBefore: 10}},
			`{"type":"auto_compaction_end","seq":2,"time":"2026-12-02T09:00:00Z","result":{"summary":"s","firstKeptEntryId":"e1","tokensBefore":10},"aborted":false,"willRetry":true}`},
		{"prompt_end", Event{Type: EventPromptEnd, Seq: 5, Time: at, Status: StatusFailed, ErrorMessage: "boom"},
			`{"type":"prompt_end","seq":5,"time":"2026-12-02T09:00:00Z","status":"failed","errorMessage":"boom"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := json.Marshal(tc.ev)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tc.want {
				t.Fatalf("got  %s\nwant %s", b, tc.want)
			}
			var back Event
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			b2, _ := json.Marshal(back)
			if string(b2) != tc.want {
				t.Fatalf("round trip changed the event: %s", b2)
			}
		})
	}
	if _, err := json.Marshal(Event{Type: "nope"}); err == nil {
		t.Fatal("an unknown event type marshalled")
	}
}

// SPEC 10: the terminal shows "Retry failed after N attempts: <finalError>",
// in the singular for one attempt (an abort_retry during the first wait).
func TestEvent_StringFinalFailure(t *testing.T) {
	for _, tc := range []struct {
		name    string
		attempt int
		final   string
		want    string
	}{
		{"retries exhausted", 3, "503 Service Unavailable", "Retry failed after 3 attempts: 503 Service Unavailable"},
		{"cancelled during the first wait", 1, "Retry cancelled", "Retry failed after 1 attempt: Retry cancelled"},
		{"two attempts", 2, "Retry cancelled", "Retry failed after 2 attempts: Retry cancelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Event{Type: EventAutoRetryEnd, Attempt: tc.attempt, FinalError: tc.final}
			if got := e.String(); got != tc.want {
				t.Fatalf("%q, want %q", got, tc.want)
			}
		})
	}
}

// Issue 25: subagent_start/_end carry the task call and the sub-agent's
// session (and its usage at the end), in JSON and as a line.
func TestEvent_SubAgentShapes(t *testing.T) {
	start := Event{Type: EventSubAgentStart, Seq: 3, ToolCallID: "call_1_0", SessionID: "s1.task-call_1_0-0a1b2c3d"}
	b, err := json.Marshal(start)
	if err != nil || !strings.Contains(string(b), `"toolCallId":"call_1_0","sessionId":"s1.task-call_1_0-0a1b2c3d"`) {
		t.Fatalf("subagent_start JSON %s %v", b, err)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil || back.SessionID != start.SessionID || back.ToolCallID != start.ToolCallID {
		t.Fatalf("round trip %+v %v", back, err)
	}
	end := Event{Type: EventSubAgentEnd, ToolCallID: "c", SessionID: "s", Usage: &Spend{Input: 10, Output: 5}}
	if b, _ := json.Marshal(end); !strings.Contains(string(b), `"usage":{"input":10,"output":5`) {
		t.Fatalf("subagent_end JSON %s", b)
	}
	if got := start.String(); got != "Sub-agent s1.task-call_1_0-0a1b2c3d started for call_1_0 (follow it: starter events --session s1.task-call_1_0-0a1b2c3d --follow)" {
		t.Fatalf("line %q", got)
	}
	if got := end.String(); got != "Sub-agent s ended (10 input + 5 output tokens)" {
		t.Fatalf("line %q", got)
	}
}
