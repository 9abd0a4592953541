package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/toolview"
	"github.com/durableagent/durableagent/retry"
)

// printer renders events for people (or as JSON lines). On a terminal a
// pending retry counts down every second on its own line.
type printer struct {
	mu          sync.Mutex
	w           io.Writer
	json        bool
	session     string
	noCountdown bool
	lastText    string
	// streamed is the entry whose text is being printed as it streams;
	// lastStreamed says the final answer was printed that way already.
	streamed     string
	streamedText string // what of the streamed entry's text was printed
	pending      string // a piped partial line, written at its newline
	lastStreamed bool
	stopTick     chan struct{}
	tickDone     chan struct{}
	// live is the output of running tool calls printed so far, by call
	// (transcript.go).
	live map[string]*liveOutput
	// usersSeen counts the user messages printed; skipFirstUser leaves
	// out the prompt's own message (the user just typed it; steers and
	// follow-ups still print as delivered).
	usersSeen     int
	skipFirstUser bool
	// body reads a tool result's whole text from the session store by
	// entry id (storeBodies; nil, or ok false: only the event's preview
	// is known).
	body func(entryID string) (text string, ok bool)
	// full prints whole tool results instead of their collapsed view, and
	// a model error's raw text (events --full, prompt --full).
	full bool
	// modelErr is the last model error printed: a prompt_end that failed
	// with it does not print it again.
	modelErr string
}

func newPrinter(w io.Writer, asJSON bool, sessionID string) *printer {
	return &printer{w: w, json: asJSON, session: sessionID, noCountdown: !isTerminal(w)}
}

// isTerminal says whether stream (a writer or stdin) is a terminal (not
// merely a character device such as /dev/null).
func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (p *printer) print(e agent.Event) {
	p.stopCountdown()
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleAssistant &&
		e.Message.StopReason != agent.StopReasonError {
		p.lastText = e.Message.Text()
		p.lastStreamed = false
	}
	if p.json {
		if p.full {
			e = p.wholeResult(e)
		}
		b, _ := json.Marshal(e)
		fmt.Fprintf(p.w, "%s\n", b)
		return
	}
	if e.Type == agent.EventMessageEnd && e.Message != nil {
		p.printMessage(e)
		return
	}
	if e.Type != agent.EventMessageUpdate {
		p.endStream()
	}
	switch e.Type {
	case agent.EventMessageUpdate:
		p.streamDelta(e)
	case agent.EventAgentStart, agent.EventTurnStart, agent.EventTurnEnd, agent.EventMessageStart, agent.EventQueueChanged:
		// nothing to show
	case agent.EventToolExecutionUpdate:
		p.printOutput(e)
	case agent.EventToolExecutionStart:
		// The main argument is cut to 100 runes.
		fmt.Fprintf(p.w, "▶ %s\n", toolview.CallLine(e.ToolName, e.Args, len(e.ToolName)+101))
	case agent.EventToolExecutionEnd:
		p.printToolEnd(e)
	case agent.EventAgentEnd:
		if e.StopReason == agent.StopReasonError {
			p.modelErr = e.ErrorMessage
			fmt.Fprintf(p.w, "✗ model error: %s\n", p.errorText(e.ErrorMessage))
		}
	case agent.EventToolApprovalRequest:
		fmt.Fprintf(p.w, "? waiting for approval: %s (%s)", toolview.ApprovalLine(e.ToolName, e.Args), e.ToolCallID)
		if e.Why != "" {
			fmt.Fprintf(p.w, ", asked by %s", e.Why)
		}
		if e.SessionScope != "" {
			fmt.Fprintf(p.w, "; --for-session allows %s", e.SessionScope)
		}
		fmt.Fprintf(p.w, "\n  starter approve --session %s %s [--deny | --for-session]\n", p.session, e.ToolCallID)
	case agent.EventAutoRetryStart:
		fmt.Fprintf(p.w, "↻ Retrying (%d/%d) in %s… (cancel: starter abort-retry --session %s)\n", e.Attempt, e.MaxAttempts, agent.FormatDelay(e.DelayMs), p.session)
		if !p.noCountdown && e.DelayMs >= 2000 {
			p.startCountdown(e)
		}
	case agent.EventUsage:
		// Without a budget to show it is the figure for a live status
		// (chat): prompt_end has it.
		if e.Budget != nil {
			fmt.Fprintf(p.w, "%s\n", e)
		}
	case agent.EventPromptEnd:
		if e.Status != agent.StatusCompleted {
			if e.ErrorMessage == p.modelErr {
				e.ErrorMessage = "" // printed above
			}
			fmt.Fprintf(p.w, "%s\n", userStopWord(e))
		}
	default:
		fmt.Fprintf(p.w, "%s\n", e)
	}
}

// userStopWord is a prompt_end as a line, with one word for a prompt the
// user stopped (issue 23): aborted, the status of `starter abort`, also
// when abort_retry ended it by cancelling the retry it waited for (the
// event says failed: "Retry cancelled …"; Temporal says Canceled for both).
func userStopWord(e agent.Event) string {
	if e.Status == agent.StatusFailed && strings.HasPrefix(e.ErrorMessage, retry.CancelledMessage) {
		e.Status = agent.StatusAborted
	}
	return e.String()
}

// startCountdown rewrites a countdown line each second (caller holds mu).
func (p *printer) startCountdown(e agent.Event) {
	stop, done := make(chan struct{}), make(chan struct{})
	p.stopTick, p.tickDone = stop, done
	wake := time.Now().Add(time.Duration(e.DelayMs) * time.Millisecond)
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				p.mu.Lock()
				fmt.Fprint(p.w, "\r\033[K")
				p.mu.Unlock()
				return
			case <-t.C:
				left := max(time.Until(wake).Milliseconds(), 0)
				p.mu.Lock()
				fmt.Fprintf(p.w, "\r\033[K  Retrying (%d/%d) in %s…", e.Attempt, e.MaxAttempts, agent.FormatDelay(left))
				p.mu.Unlock()
			}
		}
	}()
}

func (p *printer) stopCountdown() {
	p.mu.Lock()
	stop, done := p.stopTick, p.tickDone
	p.stopTick, p.tickDone = nil, nil
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// errorText is a model error on one readable line: an HTTP error's JSON
// body replaced by its type and message ("400 Bad Request:
// invalid_request_error: ..."), the request's method and URL left out;
// with --full the raw text.
func (p *printer) errorText(msg string) string {
	i := strings.IndexByte(msg, '{')
	var body struct {
		Error struct{ Type, Message string }
	}
	if p.full || i < 0 || json.NewDecoder(strings.NewReader(msg[i:])).Decode(&body) != nil || body.Error.Message == "" {
		if p.full {
			return msg
		}
		return line.Cut(toolview.OneLine(msg), 300)
	}
	head := strings.TrimSpace(msg[:i])
	if _, rest, ok := strings.Cut(head, `": `); ok && strings.HasPrefix(head, "POST ") {
		head = rest // the SDK's POST "URL": 400 Bad Request
	}
	parts := []string{head, body.Error.Type, line.Cut(toolview.OneLine(body.Error.Message), 300)}
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), ": ")
}

// streamDelta prints the assistant's text as it streams: at once on a
// terminal, a line at a time when piped. A delta of another entry (a
// retry's attempt) starts a new line.
func (p *printer) streamDelta(e agent.Event) {
	ev := e.AssistantMessageEvent
	if ev == nil || ev.Type != agent.DeltaText || ev.Delta == "" {
		return
	}
	if p.streamed != e.EntryID {
		p.endStream()
		p.streamed = e.EntryID
	}
	p.writeStream(ev.Delta)
}

// writeStream prints streamed text of p.streamed: at once on a terminal,
// a line at a time when piped.
func (p *printer) writeStream(delta string) {
	p.streamedText += delta
	if !p.noCountdown {
		fmt.Fprint(p.w, delta)
		return
	}
	p.pending += delta
	if i := strings.LastIndexByte(p.pending, '\n'); i >= 0 {
		fmt.Fprint(p.w, p.pending[:i+1])
		p.pending = p.pending[i+1:]
	}
}

// endStream finishes the streamed text's line, if text streams.
func (p *printer) endStream() {
	if p.streamed == "" {
		return
	}
	fmt.Fprintln(p.w, p.pending)
	p.pending = ""
	p.streamed, p.streamedText = "", ""
}
