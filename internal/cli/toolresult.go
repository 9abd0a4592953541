package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/toolview"
)

// maxResultLineRunes cuts a very long line (minified output) of a
// collapsed tool result; --full prints it whole.
const maxResultLineRunes = 400

// printToolEnd prints a tool result as terminal agents show it
// (toolview): ✓ or ✗, the tool, then its view, indented. The event
// carries a preview; when the preview is not the whole result the text
// is read from the session store, and when that fails the preview shows
// with the command that prints the whole result. Caller holds mu.
func (p *printer) printToolEnd(e agent.Event) {
	mark := "✓"
	if e.IsError {
		mark = "✗"
	}
	text, whole := e.ToolResult.Text(), true
	if e.ToolResult != nil && e.ToolResult.Details["truncated"] == true {
		whole = false
		if p.body != nil && e.EntryID != "" {
			if t, ok := p.body(e.EntryID); ok {
				text, whole = t, true
			}
		}
	}
	if p.endLive(e, mark, text, whole) {
		return
	}
	view := toolview.Collapsed
	if p.full {
		view = toolview.Full
	}
	lines := view(e.ToolName, text, e.IsError)
	if !whole {
		lines = append(lines, toolview.Line{Kind: toolview.Elided,
			Text: fmt.Sprintf("… (a preview; the whole result: starter show --session %s %s)", p.session, e.EntryID)})
	}
	head := fmt.Sprintf("  %s %s", mark, e.ToolName)
	if len(lines) == 0 {
		fmt.Fprintln(p.w, head)
		return
	}
	// The first cut of a result known whole says how to see the rest.
	hint := ""
	if whole && e.EntryID != "" {
		hint = fmt.Sprintf(" (all: --full, or starter show --session %s %s)", p.session, e.EntryID)
	}
	show := func(l toolview.Line) string {
		s := p.resultLine(l.Text)
		if l.Kind == toolview.Elided || s != l.Text {
			s, hint = s+hint, ""
		}
		return s
	}
	if lines[0].Kind != toolview.Elided {
		head += ": " + show(lines[0])
		lines = lines[1:]
	}
	fmt.Fprintln(p.w, head)
	for _, l := range lines {
		fmt.Fprintf(p.w, "    %s\n", show(l))
	}
}

// endLive ends a call whose output printed live (printOutput): the lines
// that did not print yet, then ✓ or ✗ with how the command ended. It
// reports false (print the result as usual) when no output printed live
// or the whole result is not known.
func (p *printer) endLive(e agent.Event, mark, text string, whole bool) bool {
	lo := p.live[e.ToolCallID]
	delete(p.live, e.ToolCallID)
	if lo == nil || lo.lines == 0 || !whole || p.full {
		return false
	}
	var out []string
	status := ""
	for _, l := range toolview.Full(e.ToolName, text, e.IsError) {
		if l.Kind == toolview.Status {
			status = l.Text
			continue
		}
		out = append(out, l.Text)
	}
	rest, ok := lo.rest(strings.Join(out, "\n") + "\n")
	if !ok {
		return false
	}
	for _, l := range splitOutput(rest) {
		fmt.Fprintf(p.w, "  │ %s\n", p.resultLine(l))
	}
	if status == "" {
		fmt.Fprintf(p.w, "  %s %s\n", mark, e.ToolName)
	} else {
		fmt.Fprintf(p.w, "  %s %s: %s\n", mark, e.ToolName, status)
	}
	return true
}

func (p *printer) resultLine(s string) string {
	if p.full {
		return s
	}
	return line.Cut(s, maxResultLineRunes+1)
}

// wholeResult is e with its tool result's whole text from the session
// store in place of the preview (e unchanged when the store cannot say).
func (p *printer) wholeResult(e agent.Event) agent.Event {
	if e.Type != agent.EventToolExecutionEnd || e.ToolResult == nil || e.ToolResult.Details["truncated"] != true || p.body == nil {
		return e
	}
	text, ok := p.body(e.EntryID)
	if !ok {
		return e
	}
	e.ToolResult = &agent.ToolResult{Content: []agent.ContentBlock{{Type: agent.BlockText, Text: text}}}
	return e
}

// storeBodies reads tool results through the workers (SessionRead), one
// entry at a time. With no worker polling, or after a read fails for
// another reason than a missing session, it stops trying: a finished
// prompt's events print their previews at once without a worker.
func storeBodies(k *client.Controller, sessionID string) func(entryID string) (string, bool) {
	var (
		mu          sync.Mutex
		asked, dead bool
	)
	return func(entryID string) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		if !asked {
			n, err := k.Polled(context.Background())
			asked, dead = true, err != nil || n == 0
		}
		if dead {
			return "", false
		}
		en, ok, err := k.ReadEntry(context.Background(), sessionID, entryID)
		if err != nil && !errors.Is(err, session.ErrNotFound) {
			dead = true
		}
		if !ok || en.Message == nil {
			return "", false
		}
		return en.Message.Text(), true
	}
}
