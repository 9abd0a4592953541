package agent

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"unicode/utf8"
)

// Bounds of what the workflow's queries answer. Temporal fails a query
// whose answer is above its payload limit (2 MiB by default, TMPRL1103)
// and its SDK logs a warning above 512 KiB; the bounds keep every answer
// well under both, whatever a user or a model wrote.
const (
	// EventsPageBytes bounds one answer of the events query: the JSON of
	// its events together. A reader continues after the last seq of a
	// page (the cursor) until a page comes back empty, or not full
	// (PageMayContinue).
	EventsPageBytes = 384 << 10
	// MaxEventBytes bounds the JSON of one event: the workflow shortens
	// the texts of a bigger event when it emits it (BoundEventSized), so every
	// page holds at least one event.
	MaxEventBytes = 128 << 10
	// MaxStateBytes bounds the JSON of the state query's answer.
	MaxStateBytes = 128 << 10
)

// minTextCap is the smallest budget BoundEventSized gives one text before it
// drops tool call arguments instead.
const minTextCap = 1 << 10

// EncodedSize is the size of v (an event, the state) as a query answers
// it: the JSON Temporal's default converter writes, HTML escapes
// included (0 when it has none).
func EncodedSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// PageMayContinue reports whether an events page may have been cut at
// EventsPageBytes: more events may follow it already. A page the events
// query answers is cut only when the next event would not fit, and no
// event is bigger than MaxEventBytes, so a page smaller than
// EventsPageBytes-MaxEventBytes holds every event there was.
func PageMayContinue(page []Event) bool {
	return len(page) > 0 && EncodedSize(page) > EventsPageBytes-MaxEventBytes
}

// BoundEventSized returns e with its texts shortened so that its JSON is at
// most MaxEventBytes: the text blocks of its messages (the user's message,
// an answer, tool results), image data, and error texts. A shortened text
// keeps its start and ends with a note of what was left out and the
// session entry that holds the whole message (e.EntryID), as tool results
// and long answers already do. When the texts alone cannot bring it under
// the bound, the arguments of its messages' tool calls become {} (each
// call's arguments are in its tool_execution_start). e's messages are
// copied, never changed in place. An event within the bound is returned
// as it is. It also returns the bounded event's JSON size (EncodedSize),
// which it has measured already.
func BoundEventSized(e Event) (Event, int) {
	if n := EncodedSize(e); n <= MaxEventBytes {
		return e, n
	}
	e = copyMessages(e)
	for limit := MaxEventBytes / 2; limit >= minTextCap; limit /= 2 {
		shortenTexts(&e, limit)
		if n := EncodedSize(e); n <= MaxEventBytes {
			return e, n
		}
	}
	dropToolArgs(&e)
	for len(e.ToolResults) > 0 && EncodedSize(e) > MaxEventBytes {
		// Hundreds of results in one turn_end: the first ones stay (each
		// has its own tool_execution_end and message_end).
		e.ToolResults = e.ToolResults[:len(e.ToolResults)/2]
	}
	return e, EncodedSize(e)
}

// copyMessages gives e its own copies of the messages and results it
// points to, so shortening them leaves the workflow's state alone.
func copyMessages(e Event) Event {
	if e.Message != nil {
		e.Message = &copyList([]Message{*e.Message})[0]
	}
	e.ToolResults, e.Messages = copyList(e.ToolResults), copyList(e.Messages)
	for _, r := range []**ToolResult{&e.ToolResult, &e.PartialResult} {
		if *r != nil {
			c := **r
			c.Content = slices.Clone(c.Content)
			*r = &c
		}
	}
	return e
}

// copyList copies ms and the content of each message (nil stays nil).
func copyList(ms []Message) []Message {
	ms = slices.Clone(ms)
	for i := range ms {
		ms[i].Content = slices.Clone(ms[i].Content)
	}
	return ms
}

// shortenTexts cuts every text of e that may be long to at most limit
// bytes of JSON, each noting the session entry that holds the whole
// message: e.EntryID for e's own message and result, "" for the tool
// results of a turn_end (entries of their own) and the messages of an
// agent_end.
func shortenTexts(e *Event, limit int) {
	e.ErrorMessage = ShortenText(e.ErrorMessage, limit, e.EntryID)
	e.FinalError = ShortenText(e.FinalError, limit, "")
	message := func(m *Message, entryID string) {
		if m != nil {
			m.ErrorMessage = ShortenText(m.ErrorMessage, limit, entryID)
			m.Output = ShortenText(m.Output, limit, entryID)
			shortenBlocks(m.Content, limit, entryID)
		}
	}
	message(e.Message, e.EntryID)
	for i := range e.ToolResults {
		message(&e.ToolResults[i], "")
	}
	for i := range e.Messages {
		message(&e.Messages[i], "")
	}
	for _, r := range []*ToolResult{e.ToolResult, e.PartialResult} {
		if r != nil {
			shortenBlocks(r.Content, limit, e.EntryID)
		}
	}
}

// shortenBlocks cuts the texts of blocks in place; an image whose data is
// above limit becomes a text block that says what it was.
func shortenBlocks(blocks []ContentBlock, limit int, entryID string) {
	for i := range blocks {
		b := &blocks[i]
		switch {
		case b.Type == BlockImage && len(b.Data) > limit:
			*b = ContentBlock{Type: BlockText, Text: fmt.Sprintf("[%s image, %d bytes of base64, left out of the event%s]",
				b.MimeType, len(b.Data), wholeIn(entryID))}
		default:
			b.Text = ShortenText(b.Text, limit, entryID)
		}
	}
}

// dropToolArgs replaces the arguments of e's messages' tool calls by {}.
func dropToolArgs(e *Event) {
	if e.Message == nil {
		return
	}
	for i, b := range e.Message.Content {
		if b.ToolCall != nil {
			tc := *b.ToolCall
			tc.Arguments = json.RawMessage("{}")
			e.Message.Content[i].ToolCall = &tc
		}
	}
}

// ShortenText cuts s so that its JSON string is at most limit bytes,
// counting the note it adds: the start of s, then "[… N more bytes: the
// whole message is session entry ID]" (without an entry id, only the
// count). s within the limit is returned as it is.
func ShortenText(s string, limit int, entryID string) string {
	if EncodedSize(s) <= limit {
		return s
	}
	// The note's size depends on how much is left out; reserve for the
	// longest it can be.
	budget := limit - EncodedSize(note(len(s), entryID))
	// The longest prefix of whole runes (as encoding/json decodes them)
	// whose JSON fits; a prefix's JSON is at least as long as it, so it
	// ends within budget bytes.
	prefix := func(i int) string {
		for j := i - 1; j >= max(i-3, 0) && i < len(s); j-- {
			if utf8.RuneStart(s[j]) {
				if _, w := utf8.DecodeRuneInString(s[j:]); j+w > i {
					i = j // inside the rune that starts at j
				}
				break
			}
		}
		return s[:i]
	}
	fits := sort.Search(min(len(s), max(budget, 0))+1, func(i int) bool { return EncodedSize(prefix(i)) > budget })
	kept := prefix(max(fits-1, 0))
	return kept + note(len(s)-len(kept), entryID)
}

func note(rest int, entryID string) string {
	return fmt.Sprintf("\n[… %d more bytes%s]", rest, wholeIn(entryID))
}

func wholeIn(entryID string) string {
	if entryID == "" {
		return ""
	}
	return ": the whole message is session entry " + entryID
}

// maxStateWarnings is how many session warnings a bounded state lists.
const maxStateWarnings = 20

// BoundState returns st with its lists cut so that its JSON is at most
// MaxStateBytes: the session warnings (the first ones, then a line that
// counts the rest), the running tool calls, and the calls waiting for
// approval (the first ones; OmittedApprovals counts the rest, each also
// announced by its tool_approval_request event). A state within the
// bound is returned as it is.
func BoundState(st State) State {
	if EncodedSize(st) <= MaxStateBytes {
		return st
	}
	if n := len(st.Warnings); n > 0 {
		ws := make([]string, 0, min(n, maxStateWarnings)+1)
		for _, w := range st.Warnings[:min(n, maxStateWarnings)] {
			ws = append(ws, ShortenText(w, 1<<10, ""))
		}
		if n > maxStateWarnings {
			ws = append(ws, fmt.Sprintf("… and %d more warnings (the worker's log has them all)", n-maxStateWarnings))
		}
		st.Warnings = ws
	}
	for len(st.RunningTools) > 1 && EncodedSize(st) > MaxStateBytes {
		st.RunningTools = st.RunningTools[:len(st.RunningTools)/2]
	}
	for len(st.PendingApprovals) > 0 && EncodedSize(st) > MaxStateBytes {
		keep := len(st.PendingApprovals) / 2
		st.OmittedApprovals += len(st.PendingApprovals) - keep
		st.PendingApprovals = st.PendingApprovals[:keep]
	}
	return st
}
