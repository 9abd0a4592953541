package tools

import (
	"strings"
	"testing"
)

// Every tool has a guideline and a one-sentence summary for the system
// prompt, and a name no tool has gets neither.
func TestGuidelineAndSummaryOfEveryTool(t *testing.T) {
	for _, name := range All() {
		if Guideline(name) == "" {
			t.Errorf("tool %s has no guideline", name)
		}
		s := Summary(name)
		if s == "" || !strings.HasSuffix(s, ".") || strings.Contains(s, ". ") {
			t.Errorf("Summary(%s) = %q, want one sentence", name, s)
		}
	}
	if Guideline("nope") != "" || Summary("nope") != "" {
		t.Error("an unknown tool has a guideline or a summary")
	}
}
