package client

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/compaction"
	"github.com/durableagent/durableagent/retry"
	"github.com/durableagent/durableagent/workflows"
)

// Issue 23: a prompt's row in the Temporal Web UI shows what it was
// asked: its static summary is the message on one line, bounded to 200
// bytes on a rune boundary, with a key in the message masked.
func TestStartPrompt_StaticSummaryIsTheMessageBoundedWithoutSecrets(t *testing.T) {
	c := &startClient{}
	k := &Controller{Client: c, TaskQueue: "q"}
	msg := "fix the flaky test\nuse key sk-ant-abcdefghijklmnopqrstuvwxyz012345 then " + strings.Repeat("é", 400)
	if _, err := k.StartPrompt(context.Background(), workflows.PromptInput{
		SessionID: "s1", Message: msg, Model: activities.ModelRef{Provider: "scripted", Name: "scripted-1"},
		Retry: retry.DefaultSettings(), Compaction: compaction.DefaultSettings(),
	}); err != nil {
		t.Fatal(err)
	}
	got := c.opts[0].StaticSummary
	if !strings.HasPrefix(got, "prompt: fix the flaky test use key sk-[redacted] then é") || len(got) > MaxSummaryBytes ||
		!utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Fatalf("summary %q (%d bytes), want the message on one line, at most %d bytes, cut with …", got, len(got), MaxSummaryBytes)
	}
	if strings.Contains(got, "abcdefghijklmnop") {
		t.Fatalf("summary %q shows the key", got)
	}
	if s := Summary("prompt: ", "hi"); s != "prompt: hi" {
		t.Fatalf("short summary %q", s)
	}
}
