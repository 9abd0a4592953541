package scripted

import (
	"fmt"
	"strings"
)

// SummaryReply is the scripted answer to a summary prompt: a short summary
// in the sections the prompt asks for (the turn-prefix sections for a
// split-turn prefix, the checkpoint sections otherwise), stating how many
// messages of each role the prompt's transcript held and whether it
// merged a previous summary. It is small whatever the transcript's size,
// so compaction really shrinks the context.
func SummaryReply(prompt string) string {
	users, assistants, tools := countTranscript(prompt)
	total := users + assistants + tools
	counts := fmt.Sprintf("%d messages (%d user, %d assistant, %d tool)", total, users, assistants, tools)
	if isTurnPrefixPrompt(prompt) {
		return "## Original Request\nThe user's request of this turn (scripted).\n\n" +
			"## Early Progress\n- Summarised " + counts + ".\n\n" +
			"## Context for Suffix\n(none)"
	}
	merged := "no"
	if strings.Contains(prompt, "<previous-summary>") {
		merged = "yes"
	}
	return "## Goal\nContinue the scripted conversation.\n\n" +
		"## Constraints & Preferences\n(none)\n\n" +
		"## Progress\n### Done\n- Summarised " + counts + ".\n### In Progress\n- (none)\n### Blocked\n- (none)\n\n" +
		"## Key Decisions\n- **Scripted summary**: deterministic, for demos and tests.\n\n" +
		"## Next Steps\n1. Answer the next user message.\n\n" +
		"## Critical Context\nPrevious summary merged: " + merged + "."
}

// isTurnPrefixPrompt tells compaction.TurnPrefixPrompt from
// compaction.SummaryPrompt by the instructions after the transcript; the
// transcript and a previous summary may hold either prompt's headings.
func isTurnPrefixPrompt(prompt string) bool {
	instructions := prompt
	if i := strings.LastIndex(prompt, "\n</conversation>"); i >= 0 {
		instructions = prompt[i:]
	}
	return !strings.Contains(instructions, "<previous-summary>") &&
		strings.Contains(instructions, "beginning of a single turn")
}

// countTranscript counts the labelled paragraphs of the transcript inside
// <conversation> (see compaction.Transcript): one per user message, one
// per assistant text and one per tool result.
func countTranscript(prompt string) (users, assistants, tools int) {
	body := prompt
	if _, after, ok := strings.Cut(body, "<conversation>\n"); ok {
		body, _, _ = strings.Cut(after, "\n</conversation>")
	}
	for line := range strings.Lines(body) {
		switch {
		case strings.HasPrefix(line, "[User]: "):
			users++
		case strings.HasPrefix(line, "[Assistant]: "):
			assistants++
		case strings.HasPrefix(line, "[Tool result"), strings.HasPrefix(line, "[Tool error"):
			tools++
		}
	}
	return users, assistants, tools
}
