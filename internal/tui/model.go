package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/spinner"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/line"
)

// commandTimeout bounds a slash command's or Esc's backend call.
const commandTimeout = 30 * time.Second

// Placeholders of the input box: idle, and while a prompt runs (Enter
// steers it, Alt+Enter queues a follow-up).
const (
	placeholderIdle    = "Message, or /help"
	placeholderRunning = "enter: steer · alt+enter: follow-up"
)

// Options configure a Model. The zero value uses the real clock.
type Options struct {
	// Now reads the clock (nil: time.Now).
	Now func() time.Time
	// Tick schedules fn's message after d (nil: tea.Tick). Tests replace
	// Now and Tick to run the countdown and the watch without waiting.
	Tick func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd
}

// Model is the chat screen. It implements tea.Model; Update and View run
// on bubbletea's goroutine only, and backend calls run in tea.Cmds.
type Model struct {
	ctx     context.Context
	backend *client.Session
	now     func() time.Time
	tick    func(time.Duration, func(time.Time) tea.Msg) tea.Cmd

	input   textinput.Model
	spinner spinner.Model
	entries []entry
	width   int
	height  int

	loading    bool           // the session's earlier messages are being read
	starting   bool           // a prompt is being started
	prompt     *runningPrompt // the prompt being followed
	retry      *retryWait     // set during a backoff wait
	compacting string         // "" or the compaction's reason ("overflow", "threshold", "manual")
	lastSeq    int64          // seq of the last event shown
	// endedEntries and endedTools are the messages and tool calls of the
	// followed prompt whose end event came: live events of theirs are
	// stale. startedTools are its calls that started (decided).
	endedEntries map[string]bool
	endedTools   map[string]bool
	startedTools map[string]bool
	quitting     bool
	// watching: a look for a prompt started elsewhere is scheduled or
	// on its way (watch.go); endedRuns are the runs this chat followed
	// to their end (not followed again).
	watching  bool
	endedRuns map[string]bool
	// looked: the first look is done; seenRun is the first run id of
	// the latest prompt the last look found.
	looked  bool
	seenRun string

	// approvals are the tool calls waiting for approval, in request
	// order; the first is asked on screen (approval.go). reason is the
	// input of a denial's reason.
	approvals []*approvalPrompt
	reason    textinput.Model
	// queue is the followed prompt's queue as its workflow holds it,
	// every client's messages (queue.go: readQueue says the flags); mine
	// are the ids of this chat's (the workflow keeps no sender); queued
	// are this chat's messages no read listed yet.
	queue           []agent.QueuedMessage
	reading, reread bool
	mine            map[string]bool
	queued          []*queuedMessage
	// pick is the prompt's queue being edited (Alt+Up), or nil.
	pick *queuePick
	// The history (history.go) is entries[historyAt:historyAt+historyLen];
	// historyUsers mark its user messages.
	historyAt, historyLen int
	historyUsers          []historyUser
	// expanded shows every tool result whole (ctrl+o toggles it).
	expanded bool
	// stats are the followed (or last) prompt's model, time, turn and
	// spend, for the stats line (statusline.go).
	stats *promptStats
	// scroll is how many lines the message list is scrolled up from its
	// end (pgup, pgdown); 0 follows the newest lines.
	scroll int
}

// runningPrompt is a prompt whose events the model follows.
type runningPrompt struct {
	prompt client.Prompt
	events <-chan tea.Msg
	// message is the text of a prompt this chat started ("" when
	// attached): its user message_end is shown already. userSeen: the
	// prompt's own user message_end came (later ones are delivered steer
	// and follow-up messages).
	message  string
	attached bool
	userSeen bool
	// first is the prompt's first run id when the watch found it.
	first string
	// calling is the model of the answer being called (its
	// message_start came, its message_end not yet); tools are the calls
	// running (tool_execution_start without its end), in start order:
	// what the status line says the prompt waits for.
	calling string
	tools   []runningTool
}

// runningTool is a tool call that started and has not ended.
type runningTool struct{ callID, name string }

// retryWait is a backoff wait, counted down on screen: the status line
// is drawn again on every spinner tick, from the time left until wake.
type retryWait struct {
	attempt, max int
	wake         time.Time
}

// retryLeft is the time left of the backoff wait.
func (m *Model) retryLeft() time.Duration { return max(m.retry.wake.Sub(m.now()), 0) }

// Messages of the model.
type (
	promptStartedMsg struct {
		prompt   client.Prompt
		events   <-chan tea.Msg
		message  string // the text of a prompt started here
		attached bool   // a prompt that was already running
		// elsewhere: the idle chat found it started from another
		// terminal (watch.go).
		elsewhere bool
	}
	promptErrorMsg struct{ err error }
	eventMsg       struct{ event agent.Event }
	// compactEventMsg is a retry event of the manual compaction; more
	// follow on ch.
	compactEventMsg struct {
		event agent.Event
		ch    <-chan tea.Msg
	}
	streamEndMsg struct{ err error }
	// resultMsg carries what a slash command or Esc has to show.
	resultMsg struct {
		entries     []entry
		endsCompact bool
	}
)

// New returns the chat model of backend's session. ctx ends the prompt
// followers (cancel it when the program exits).
func New(ctx context.Context, backend *client.Session, opts Options) *Model {
	in := textinput.New() // prompt "> ", no length limit
	in.Placeholder = placeholderIdle
	in.Focus()
	m := &Model{
		ctx: ctx, backend: backend, now: opts.Now, tick: opts.Tick,
		input: in, spinner: spinner.New(spinner.WithSpinner(spinner.Dot)),
		endedEntries: map[string]bool{}, endedTools: map[string]bool{}, startedTools: map[string]bool{},
		reason: newReasonInput(), loading: true, endedRuns: map[string]bool{},
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.tick == nil {
		m.tick = tea.Tick
	}
	m.note(fmt.Sprintf("Session %s. Enter sends a message; /help lists commands.", backend.SessionID()))
	m.historyAt = len(m.entries)
	return m
}

// Init implements tea.Model: it shows the session's earlier messages and
// attaches to a prompt that is already running in the session (started
// elsewhere, or left by an earlier chat).
func (m *Model) Init() tea.Cmd { return tea.Batch(textinput.Blink, m.spinner.Tick, m.open()) }

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.input.Width = max(msg.Width-len(m.input.Prompt)-1, 10)
		return m, nil
	case tea.KeyMsg:
		switch msg.Type {
		case tea.KeyCtrlC, tea.KeyCtrlD:
			return m, m.quit()
		case tea.KeyEsc:
			if m.pick != nil {
				m.endPick()
				return m, nil
			}
			return m, m.escape()
		case tea.KeyCtrlO:
			m.expanded = !m.expanded
			return m, nil
		case tea.KeyPgUp:
			m.scroll += max(m.height/2, 1)
			return m, nil
		case tea.KeyPgDown:
			m.scroll = max(m.scroll-max(m.height/2, 1), 0)
			return m, nil
		}
		if a := m.approval(); a != nil {
			return m, m.approvalKey(a, msg)
		}
		if m.pick != nil {
			return m, m.pickKey(msg)
		}
		if msg.Type == tea.KeyEnter {
			return m, m.submit(msg.Alt)
		}
		if msg.Type == tea.KeyUp && msg.Alt && m.prompt != nil {
			m.editQueue()
			return m, nil
		}
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return m, cmd
	case spinner.TickMsg:
		var cmd tea.Cmd
		m.spinner, cmd = m.spinner.Update(msg)
		return m, cmd
	case openedMsg:
		return m, m.opened(msg)
	case promptStartedMsg:
		return m, m.started(msg)
	case promptErrorMsg:
		m.starting = false
		m.errorf("Prompt not started: %s", line.First(msg.err.Error()))
		return m, nil
	case eventMsg:
		cmd := m.handleEvent(msg.event)
		if m.prompt == nil {
			return m, cmd
		}
		return m, tea.Batch(cmd, waitEvent(m.prompt.events))
	case compactEventMsg:
		return m, tea.Batch(m.retryEvent(msg.event), waitEvent(msg.ch))
	case streamEndMsg:
		m.endPrompt(agent.Event{})
		if msg.err != nil && m.ctx.Err() == nil {
			m.errorf("Lost the prompt's events: %s (it may still be running; /state tells)", line.First(msg.err.Error()))
		}
		return m, nil
	case resultMsg:
		if msg.endsCompact && m.compacting == "manual" {
			m.compacting, m.retry = "", nil
		}
		m.entries = append(m.entries, msg.entries...)
		return m, nil
	case fullResultMsg:
		m.fullResult(msg)
		return m, nil
	case fullArgsMsg:
		for _, a := range m.approvals {
			if a.callID == msg.callID {
				a.full = msg.args
			}
		}
		return m, nil
	case approvalSentMsg:
		return m, m.approvalSent(msg)
	case rewoundMsg:
		m.entries, m.historyLen, m.historyUsers, m.loading = m.entries[:m.historyAt], 0, nil, true
		m.note(string(msg))
		return m, m.open()
	case stateMsg:
		m.stateRead(msg)
		return m, nil
	case queueSentMsg:
		return m, m.queueSent(msg)
	case queueReadMsg:
		return m, m.queueRead(msg)
	case watchMsg:
		return m, m.watch()
	case watchedMsg:
		return m, m.watched(msg)
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
}

// Status returns the status line's text and what Esc sends now
// (agent.SignalAbort, agent.SignalAbortRetry, or "" for nothing).
func (m *Model) Status() (text, esc string) {
	switch {
	case m.compacting == "manual" && m.retry != nil:
		return fmt.Sprintf("Compacting: summary retry (%d/%d) in %s… (esc to cancel the retry)", m.retry.attempt, m.retry.max,
			agent.FormatDelay(m.retryLeft().Milliseconds())), agent.SignalAbortRetry
	case m.compacting == "manual":
		return "Compacting… (esc to cancel)", agent.SignalAbort
	case m.compacting == "overflow":
		return "Context overflow detected, Auto-compacting… (esc to cancel)", agent.SignalAbort
	case m.compacting != "":
		return "Auto-compacting… (esc to cancel)", agent.SignalAbort
	case m.retry != nil:
		return fmt.Sprintf("Retrying (%d/%d) in %s… (esc to cancel)", m.retry.attempt, m.retry.max,
			agent.FormatDelay(m.retryLeft().Milliseconds())), agent.SignalAbortRetry
	case m.prompt != nil && len(m.approvals) > 0:
		return "Waiting for your approval… (esc to abort)", agent.SignalAbort
	case m.prompt != nil && len(m.prompt.tools) > 0:
		return "Running " + toolNames(m.prompt.tools) + "… (esc to abort)", agent.SignalAbort
	case m.prompt != nil && m.prompt.calling != "":
		return "Calling " + m.prompt.calling + "… (esc to abort)", agent.SignalAbort
	case m.prompt != nil:
		return "Working… (esc to abort)", agent.SignalAbort
	case m.starting:
		return "Starting…", ""
	}
	return "", ""
}

// escape sends what Esc is bound to.
func (m *Model) escape() tea.Cmd {
	_, esc := m.Status()
	send := map[string]func(context.Context) error{agent.SignalAbortRetry: m.backend.AbortRetry, agent.SignalAbort: m.backend.Abort}[esc]
	if send == nil {
		return nil
	}
	return m.do(esc, func(ctx context.Context) ([]entry, error) { return nil, send(ctx) })
}

// started follows a prompt this chat started, or one the start-up found
// running (attached).
func (m *Model) started(msg promptStartedMsg) tea.Cmd {
	m.starting = false
	m.endedEntries, m.endedTools, m.startedTools = map[string]bool{}, map[string]bool{}, map[string]bool{}
	m.prompt = &runningPrompt{prompt: msg.prompt, events: msg.events, message: msg.message, attached: msg.attached}
	m.queue, m.mine = nil, map[string]bool{}
	model := ""
	if m.stats != nil {
		model = m.stats.model // until this prompt's first answer says
	}
	m.stats = &promptStats{model: model}
	m.input.Placeholder = placeholderRunning
	switch {
	case msg.elsewhere:
		m.note("A prompt started in this session from another terminal; following it.")
	case msg.attached:
		m.note("Attached to the prompt already running in this session; its events so far follow.")
	}
	return tea.Batch(waitEvent(msg.events), m.readQueue()) // what it holds already
}

// submit handles Enter (followUp: Alt+Enter): a slash command, a new
// prompt, or, while a prompt runs, a steer (follow_up) message for it.
func (m *Model) submit(followUp bool) tea.Cmd {
	text := strings.TrimSpace(m.input.Value())
	if text == "" {
		return nil
	}
	if strings.HasPrefix(text, "/") {
		m.input.Reset()
		return m.slash(text)
	}
	if m.prompt != nil {
		m.input.Reset()
		return m.sendQueued(text, followUp)
	}
	if m.loading || m.starting || m.compacting == "manual" {
		m.note("Busy: wait for the session to load, the prompt to start or the compaction to end; the text stays in the input.")
		return nil
	}
	m.input.Reset()
	m.entries = append(m.entries, entry{kind: entryUser, text: text})
	m.starting = true
	return m.startPrompt(text)
}

func (m *Model) quit() tea.Cmd {
	m.quitting = true
	return tea.Quit
}

// endPrompt forgets the followed prompt and its waits; calls still
// waiting for approval are no longer asked about, and messages still
// queued go back into the input.
func (m *Model) endPrompt(end agent.Event) {
	if p := m.prompt; p != nil {
		// Not followed again by the watch (watch.go).
		for _, id := range []string{p.prompt.RunID, p.first} {
			if id != "" {
				m.endedRuns[id] = true
			}
		}
	}
	m.prompt, m.retry = nil, nil
	m.input.Placeholder = placeholderIdle
	for len(m.approvals) > 0 {
		m.approvalDecided(m.approvals[0].callID)
	}
	m.endPick()
	m.undelivered(end)
	m.replaceLive(nil) // drops a streamed message that no message_end finalised
	if m.compacting != "manual" {
		m.compacting = ""
	}
}

// call runs fn as a command, on a context bounded by commandTimeout.
func (m *Model) call(fn func(context.Context) tea.Msg) tea.Cmd {
	ctx := m.ctx
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, commandTimeout)
		defer cancel()
		return fn(ctx)
	}
}

// do runs a backend call as a command and shows its result or error.
func (m *Model) do(name string, fn func(context.Context) ([]entry, error)) tea.Cmd {
	return m.call(func(ctx context.Context) tea.Msg {
		es, err := fn(ctx)
		if err != nil {
			es = append(es, entry{kind: entryError, text: name + ": " + line.First(err.Error())})
		}
		return resultMsg{entries: es}
	})
}

func (m *Model) note(text string) { m.entries = append(m.entries, entry{kind: entryNote, text: text}) }

func (m *Model) errorf(format string, args ...any) {
	m.entries = append(m.entries, entry{kind: entryError, text: fmt.Sprintf(format, args...)})
}

// View implements tea.Model: the message list, the status line, the input.
func (m *Model) View() string {
	if m.quitting {
		return ""
	}
	var lines []string
	for _, e := range m.entries {
		lines = append(lines, strings.Split(e.render(m.width, m.expanded), "\n")...)
	}
	status, _ := m.Status()
	if status != "" {
		status = m.spinner.View() + " " + statusStyle.Render(status)
	} else {
		status = noteStyle.Render("enter: send · ctrl+o: expand results · /help · ctrl+c: quit")
	}
	bottom := inputStyle.Width(m.width).Render(m.input.View())
	if a := m.approval(); a != nil {
		bottom = m.approvalView(a)
	}
	below := append(m.queueView(), status)
	if stats := m.statsLine(); stats != "" {
		below = append(below, noteStyle.Render(stats))
	}
	below = append(below, strings.Split(bottom, "\n")...)
	if m.height > 0 {
		room := max(m.height-len(below), 1)
		if len(lines) > room {
			m.scroll = min(m.scroll, len(lines)-room)
			end := len(lines) - m.scroll
			lines = lines[end-room : end]
			if m.scroll > 0 {
				lines[room-1] = noteStyle.Render(fmt.Sprintf("↓ %d newer lines (pgdown)", m.scroll))
			}
		} else {
			m.scroll = 0
		}
		for len(lines) < room {
			lines = append([]string{""}, lines...)
		}
	}
	return strings.Join(append(lines, below...), "\n")
}
