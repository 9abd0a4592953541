package scripted

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/compaction"
	"github.com/durableagent/durableagent/internal/llm"
)

func userMsgs(texts ...string) []agent.Message {
	var out []agent.Message
	for _, t := range texts {
		out = append(out, agent.TextMessage(agent.RoleUser, t))
	}
	return out
}

func TestComplete_ReplaysFaultScriptByAttempt(t *testing.T) {
	script := []string{"503 Service Unavailable", "[529 overloaded_error] Overloaded", "overflow", "ok"}
	tests := []struct {
		attempt    int
		stop       agent.StopReason
		errText    string
		status     int
		errType    string
		wantAnswer string
	}{
		{0, agent.StopReasonError, "503 Service Unavailable", 0, "", ""},
		{1, agent.StopReasonError, "Overloaded", 529, "overloaded_error", ""},
		{2, agent.StopReasonError, OverflowText, 400, "invalid_request_error", ""},
		{3, agent.StopReasonStop, "", 0, "", "done"},
		{4, agent.StopReasonStop, "", 0, "", "done"}, // past the end of the script
	}
	p := New(Options{Reply: "done"})
	for _, tt := range tests {
		m := p.Complete(context.Background(), llm.Request{Messages: userMsgs("hi"), Attempt: tt.attempt, Faults: script})
		if m.StopReason != tt.stop || m.ErrorMessage != tt.errText || m.ErrorStatus != tt.status || m.ErrorType != tt.errType || m.Text() != tt.wantAnswer {
			t.Errorf("attempt %d: %+v", tt.attempt, m)
		}
	}
}

func TestComplete_HangHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := New(Options{}).Complete(ctx, llm.Request{Faults: []string{"hang"}})
	if m.StopReason != agent.StopReasonAborted {
		t.Fatalf("stop reason %q, want aborted", m.StopReason)
	}
	m = New(Options{}).Complete(context.Background(), llm.Request{Messages: userMsgs("q"), Faults: []string{"hang:1ms"}})
	if m.StopReason != agent.StopReasonStop || m.Text() != "Scripted reply to: q" {
		t.Fatalf("after a short hang: %+v", m)
	}
}

func TestParseFault_RejectsBadElements(t *testing.T) {
	for _, s := range []string{"hang:soon", "[503 no closing bracket", "[503]"} {
		if _, err := ParseFault(s); err == nil {
			t.Errorf("ParseFault(%q) = nil error", s)
		}
	}
	if err := ValidateScript([]string{"ok", "overflow", "hang:2s", "[429] slow down"}); err != nil {
		t.Errorf("ValidateScript: %v", err)
	}
}

// A summary request (Purpose or system prompt) gets a deterministic
// summary in the compaction sections, built from the transcript's counts.
func TestComplete_SummaryRequestGetsDeterministicSummary(t *testing.T) {
	items := []compaction.Item{
		{Role: compaction.RoleUser, Text: "fix the bug"},
		{Role: compaction.RoleAssistant, Text: "looking"},
		{Role: compaction.RoleToolResult, ToolName: "bash", Text: "ok"},
		{Role: compaction.RoleUser, Text: "thanks"},
	}
	prompt := compaction.SummaryPrompt(compaction.PromptInput{Items: items})
	p := New(Options{Reply: "not a summary"})
	for _, req := range []llm.Request{
		{Purpose: llm.PurposeSummarize, Messages: userMsgs(prompt)},
		{System: compaction.SummarySystemPrompt, Messages: userMsgs(prompt)},
	} {
		m := p.Complete(context.Background(), req)
		text := m.Text()
		if m.StopReason != agent.StopReasonStop || !strings.HasPrefix(text, "## Goal\n") ||
			!strings.Contains(text, "Summarised 4 messages (2 user, 1 assistant, 1 tool)") {
			t.Fatalf("summary answer %+v:\n%s", m, text)
		}
		if again := p.Complete(context.Background(), req).Text(); again != text {
			t.Fatal("summary is not deterministic")
		}
	}
	merged := SummaryReply(compaction.SummaryPrompt(compaction.PromptInput{Items: items, PreviousSummary: "old"}))
	if !strings.Contains(merged, "Previous summary merged: yes") {
		t.Errorf("merged summary does not say so:\n%s", merged)
	}
	prefix := SummaryReply(compaction.TurnPrefixPrompt(compaction.PromptInput{Items: items[:2]}))
	if !strings.HasPrefix(prefix, "## Original Request\n") || !strings.Contains(prefix, "Summarised 2 messages") {
		t.Errorf("turn prefix summary:\n%s", prefix)
	}
	// A previous summary that came from a split turn still gets a
	// history summary when merged.
	again := SummaryReply(compaction.SummaryPrompt(compaction.PromptInput{Items: items, PreviousSummary: compaction.JoinSplitTurnSummary(merged, prefix)}))
	if !strings.HasPrefix(again, "## Goal\n") {
		t.Errorf("merging a split-turn summary answered with the wrong sections:\n%s", again)
	}
}

// Summary requests replay their own fault script (the activity passes
// ModelRef.SummaryFaults as Faults), so summaries fail independently.
func TestComplete_SummaryFaultsApplyToSummaryRequests(t *testing.T) {
	p := New(Options{})
	req := llm.Request{Purpose: llm.PurposeSummarize, Messages: userMsgs("x"), Faults: []string{"503 Service Unavailable"}}
	if m := p.Complete(context.Background(), req); m.StopReason != agent.StopReasonError || m.ErrorMessage != "503 Service Unavailable" {
		t.Fatalf("attempt 0: %+v", m)
	}
	req.Attempt = 1
	if m := p.Complete(context.Background(), req); m.StopReason != agent.StopReasonStop || !strings.HasPrefix(m.Text(), "## Goal") {
		t.Fatalf("attempt 1: %+v", m)
	}
}

func TestComplete_LatencyHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if m := New(Options{Latency: time.Hour}).Complete(ctx, llm.Request{}); m.StopReason != agent.StopReasonAborted {
		t.Fatalf("stop reason %q, want aborted", m.StopReason)
	}
}
