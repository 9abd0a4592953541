package cli

import (
	"fmt"
	"strings"

	"github.com/durableagent/durableagent/agent"
)

// The transcript a person follows (issue 23): every message of the
// prompt, steers and follow-ups as they are delivered, and the output of
// a running command as it comes.

// printMessage prints a message_end: a user message (the prompt's own,
// unless the user just typed it; then each steer or follow-up as it is
// delivered), and every assistant message's text, completing what
// streamed of it. Caller holds mu.
func (p *printer) printMessage(e agent.Event) {
	m := e.Message
	switch {
	case m.Role == agent.RoleUser:
		p.endStream()
		p.usersSeen++
		if p.usersSeen == 1 && p.skipFirstUser {
			return
		}
		fmt.Fprintf(p.w, "› %s\n", strings.ReplaceAll(m.Text(), "\n", "\n  "))
	case m.Role == agent.RoleAssistant && m.StopReason != agent.StopReasonError:
		text := m.Text()
		if p.streamed == e.EntryID && p.streamed != "" && strings.HasPrefix(text, p.streamedText) {
			// Follow completes a streamed answer before its message_end;
			// what it left out is written now.
			p.writeStream(text[len(p.streamedText):])
			p.endStream()
		} else {
			// Not streamed, or streamed only in part (a late attach
			// gets the tail): the whole text.
			p.endStream()
			if text != "" {
				fmt.Fprintln(p.w, text)
			}
		}
		p.lastStreamed = true
	default:
		p.endStream()
	}
}

// liveOutput is what of a running call's output was printed: whole lines
// only, the last one remembered to find the place again when the
// snapshot (the latest 8 KB) has moved on.
type liveOutput struct {
	printed  string // the snapshot prefix printed (whole lines)
	lastLine string
	lines    int
}

// printOutput prints the new whole lines of a running command's output
// (tool_execution_update carries the output so far), each as "  │ line".
func (p *printer) printOutput(e agent.Event) {
	if e.ToolCallID == "" || e.PartialResult == nil {
		return
	}
	p.endStream()
	text := e.PartialResult.Text()
	end := strings.LastIndexByte(text, '\n')
	if end < 0 {
		return // no whole line yet
	}
	text = text[:end+1]
	if p.live == nil {
		p.live = map[string]*liveOutput{}
	}
	lo := p.live[e.ToolCallID]
	if lo == nil {
		lo = &liveOutput{}
		p.live[e.ToolCallID] = lo
	}
	fresh, ok := lo.rest(text)
	if !ok {
		fmt.Fprintln(p.w, "  │ …")
		fresh = text
	}
	lo.printed = text
	for _, l := range splitOutput(fresh) {
		fmt.Fprintf(p.w, "  │ %s\n", p.resultLine(l))
		lo.lastLine = l
		lo.lines++
	}
}

// rest is what of text follows the output printed: after the printed
// prefix, else after the last line printed; ok is false when neither is
// found (the snapshot moved past both).
func (lo *liveOutput) rest(text string) (string, bool) {
	if strings.HasPrefix(text, lo.printed) {
		return text[len(lo.printed):], true
	}
	if i := strings.LastIndex("\n"+text, "\n"+lo.lastLine+"\n"); i >= 0 && lo.lastLine != "" {
		return text[i+len(lo.lastLine)+1:], true
	}
	return "", false
}

func splitOutput(s string) []string {
	s = strings.TrimSuffix(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
