package tui

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/stack"
	"github.com/durableagent/durableagent/internal/testserver"
)

// The chat's calls (Enter, Esc, y/n/a, slash commands) against the
// package's shared embedded server (testserver) and one worker, whose
// scripted model plays the faults each test's settings carry in its
// prompts. Skipped under -short.

var worker struct {
	once  sync.Once
	dir   string
	stack *stack.Stack
	err   error
}

// closeWorker stops the worker and removes its data (TestMain).
func closeWorker() {
	if worker.stack != nil {
		_ = worker.stack.Close()
	}
	if worker.dir != "" {
		_ = os.RemoveAll(worker.dir)
	}
}

// served is the client of session on the worker, with the worker's
// settings adjusted by tweak (faults, delays) and a workspace of its own.
func served(t *testing.T, session string, tweak func(*settings.Settings)) *client.Session {
	t.Helper()
	addr := testserver.Address(t)
	worker.once.Do(func() {
		worker.dir, worker.err = os.MkdirTemp("", "tui-server-")
		if worker.err != nil {
			return
		}
		s := settings.Defaults()
		s.DataDir, s.Dev.Port, s.Dev.UI = worker.dir, 0, false
		s.Temporal.Address, s.Temporal.TaskQueue = addr, testserver.Queue("tui")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		worker.stack, worker.err = stack.Start(ctx, s, stack.Options{Dev: true, ReuseServer: true, Logger: testserver.Quiet()})
	})
	if worker.err != nil {
		t.Fatalf("start the worker: %v", worker.err)
	}
	s := worker.stack.Settings
	if tweak != nil {
		tweak(&s)
	}
	b := open(t, worker.stack.Client, s, session)
	b.Workspace = t.TempDir()
	return b
}

// faults sets the scripted model's answers and the retry delay.
func faults(baseDelayMs int64, answers ...string) func(*settings.Settings) {
	return func(s *settings.Settings) {
		s.Scripted.Faults = answers
		s.Retry.BaseDelayMs = baseDelayMs
	}
}

// SPEC 10: on auto_retry_start Esc is bound to abort_retry and the loader
// reads "Retrying (attempt/maxAttempts) in Ns… (esc to cancel)", counting
// down every second; Esc cancels the retry (abort_retry, not abort: the
// prompt fails with "Retry cancelled") and the final failure shows "Retry
// failed after N attempts: <finalError>".
func TestServer_RetryCountdownAndEscCancelsRetry(t *testing.T) {
	d := newDriver(t, served(t, testserver.Session("tui-retry"), faults(30000, "503 Service Unavailable")))
	d.typeLine("hello")
	d.untilScreen("Retrying (1/3) in 30s… (esc to cancel)")
	if _, esc := d.status(); esc != agent.SignalAbortRetry {
		t.Fatalf("esc bound to %q during the backoff, want abort_retry", esc)
	}
	for _, want := range []string{"› hello", "✗ 503 Service Unavailable"} {
		if !strings.Contains(d.m.View(), want) {
			t.Errorf("screen lacks %q:\n%s", want, d.m.View())
		}
	}
	for _, want := range []string{"in 29s…", "in 28s…"} {
		d.advance(time.Second)
		if text, _ := d.status(); !strings.Contains(text, want) {
			t.Errorf("after a second the loader reads %q, want %q", text, want)
		}
	}
	d.key(tea.KeyEsc)
	d.untilScreen("Retry failed after 1 attempt: Retry cancelled")
	d.until("prompt end", func() bool { text, _ := d.status(); return text == "" })
	d.untilScreen("Retry cancelled (last error: 503 Service Unavailable)")
}

// SPEC 4/10: a chain that runs out of retries shows "Retry failed after N
// attempts: <finalError>".
func TestServer_FinalRetryFailure(t *testing.T) {
	d := newDriver(t, served(t, testserver.Session("tui-final"), faults(10, "529 overloaded", "529 overloaded", "529 overloaded", "529 overloaded")))
	d.typeLine("hello")
	d.untilScreen("Retry failed after 3 attempts: 529 overloaded")
	d.until("idle", func() bool { text, _ := d.status(); return text == "" })
}

// Slash commands call the backend (or not, for bad input) and show the
// outcome.
func TestServer_SlashCommands(t *testing.T) {
	d := newDriver(t, served(t, testserver.Session("tui-slash"), nil))
	for _, c := range []struct{ line, shows string }{
		{"/retry off", "Auto-retry off (retry.enabled=false saved)."},
		{"/state", "autoRetryEnabled false  isRetrying false"},
		{"/retry on", "Auto-retry on"},
		{"/state", "autoRetryEnabled true  isRetrying false"},
		{"/retry maybe", "usage: /retry on|off"},
		{"/compact keep the plan", "Nothing to compact"},
		{"/help", "/retry on|off"},
		{"/reboot", `unknown command "/reboot"`},
	} {
		d.typeLine(c.line)
		d.untilScreen(c.shows)
	}
}

// twoPrompts runs two prompts in session, so that with
// compaction.keepRecentTokens 10 it has something to compact.
func twoPrompts(t *testing.T, session string) {
	t.Helper()
	d := newDriver(t, served(t, session, keepLittle(nil)))
	for _, msg := range []string{"hello", "again"} {
		d.typeLine(msg)
		d.untilScreen("Scripted reply to: " + msg)
		d.until("prompt "+msg+" ended", func() bool { return d.m.prompt == nil })
	}
}

func keepLittle(tweak func(*settings.Settings)) func(*settings.Settings) {
	return func(s *settings.Settings) {
		s.Compaction.KeepRecentTokens = 10
		if tweak != nil {
			tweak(s)
		}
	}
}

// SPEC 9 (note) and 10: /compact shows its loader; a summary call that
// waits out a 503 shows the retry countdown with Esc bound to abort_retry,
// which reaches the compaction; Enter is refused meanwhile, the text
// kept; the failure is shown and the loader goes away. A compaction that
// succeeds says what it did.
func TestServer_CompactRetryCountdownBusyAndEscCancelsIt(t *testing.T) {
	session := testserver.Session("tui-compact")
	twoPrompts(t, session)
	d := newDriver(t, served(t, session, keepLittle(faults(30000, "503 Service Unavailable"))))
	d.typeLine("/compact")
	if text, esc := d.status(); text != "Compacting… (esc to cancel)" || esc != agent.SignalAbort {
		t.Errorf("loader %q esc %q during /compact", text, esc)
	}
	d.untilScreen("Compacting: summary retry (1/3) in 30s… (esc to cancel the retry)")
	if _, esc := d.status(); esc != agent.SignalAbortRetry {
		t.Fatalf("esc bound to %q during the summary's backoff, want abort_retry", esc)
	}
	d.advance(time.Second)
	if text, _ := d.status(); !strings.Contains(text, "in 29s…") {
		t.Errorf("after a second the loader reads %q", text)
	}
	d.typeLine("too early")
	d.untilScreen("Busy: wait for the session to load, the prompt to start or the compaction to end")
	if got := d.m.input.Value(); got != "too early" {
		t.Errorf("input after a refused Enter = %q, want the text kept", got)
	}
	d.m.input.Reset()
	d.key(tea.KeyEsc)
	d.untilScreen("compact: compaction of session " + session + " failed")
	if !strings.Contains(d.m.View(), "Retry failed after 1 attempt: Retry cancelled") {
		t.Errorf("screen lacks the retry's end:\n%s", d.m.View())
	}
	if text, esc := d.status(); text != "" || esc != "" {
		t.Errorf("loader after the compaction = %q (esc %q)", text, esc)
	}

	d = newDriver(t, served(t, session, keepLittle(nil)))
	d.typeLine("/compact")
	d.untilScreen("into a summary (entry ")
}

// A message typed while a prompt runs steers it (issue 12) rather than
// starting a second prompt; Alt+Enter and /followup queue follow-ups;
// queued messages show until their user message_end delivers them. /quit
// quits.
func TestServer_SteerFollowUpAndQuit(t *testing.T) {
	d := newDriver(t, served(t, testserver.Session("tui-steer"), faults(100, "hang:3s", "text:done")))
	d.typeLine("hello")
	d.untilScreen("Working…")
	d.typeLine("look at main.go first")
	d.runes("then write tests")
	d.send(tea.KeyMsg{Type: tea.KeyEnter, Alt: true})
	d.typeLine("/followup and update the docs")
	d.typeLine("/steer")
	d.untilScreen("usage: /steer TEXT")
	d.shows("step 1", []string{"Steering: look at main.go first", "Follow-up: then write tests", "Follow-up: and update the docs"}, nil)
	d.until("delivered", func() bool {
		v := d.m.View()
		return strings.Contains(v, "› look at main.go first") && strings.Contains(v, "› then write tests") && strings.Contains(v, "› and update the docs") && d.m.prompt == nil
	})
	d.shows("step 2", []string{"done"}, []string{"Steering:", "Follow-up:", "session busy"})
	d.typeLine("/quit")
	d.until("quit", func() bool { return d.quit })
	if d.m.View() != "" {
		t.Errorf("view after quit = %q, want empty", d.m.View())
	}
}

// Issue 23 (nothing typed is lost): a steer typed while a retry waits,
// which the prompt hands back when the retry is cancelled, goes back into
// the input with prompt_end's reason; a follow-up another client sent is
// shown with its kind and reason.
func TestServer_HandedBackSteerReturnsWithItsReason(t *testing.T) {
	session := testserver.Session("tui-handback")
	d := newDriver(t, served(t, session, faults(60000, "503 Service Unavailable")))
	d.typeLine("hello")
	d.untilScreen("Retrying (1/3)")
	d.typeLine("use the other file")
	d.untilScreen("Steering: use the other file")
	other := served(t, session, nil)
	if err := other.FollowUp(context.Background(), "and from elsewhere"); err != nil {
		t.Fatal(err)
	}
	d.key(tea.KeyEsc)
	d.untilScreen("Not delivered (retry cancelled): use the other file (back in the input)")
	d.untilScreen("Not delivered (follow-up from another client, retry cancelled): and from elsewhere")
	d.shows("step 3", []string{"Not delivered (retry cancelled): use the other file (back in the input)"}, []string{"Steering:"})
	if got := d.m.input.Value(); got != "use the other file" {
		t.Errorf("input after the prompt ended = %q, want the handed-back steer", got)
	}
}

// Issue 40: Alt+Up opens the prompt's queue (every client's messages, by
// id) above the input: Up and Down pick one, Enter saves the input as its
// text, an empty input removes it, and one removed meanwhile by another
// client is refused in one line. The model receives the edited text
// only.
func TestServer_AltUpEditsAndRemovesQueuedMessages(t *testing.T) {
	session := testserver.Session("tui-editqueue")
	d := newDriver(t, served(t, session, faults(20000, "503 Service Unavailable")))
	d.typeLine("hello")
	d.untilScreen("Retrying (1/3)")
	d.typeLine("use the other file")
	d.runes("then write tests")
	d.send(tea.KeyMsg{Type: tea.KeyEnter, Alt: true})
	d.until("both in the workflow's queue", func() bool { return len(d.m.queue) == 2 })

	altUp := tea.KeyMsg{Type: tea.KeyUp, Alt: true}
	d.send(altUp)
	d.until("the last one picked", func() bool { return d.m.input.Value() == "then write tests" })
	d.shows("picking", []string{"▸ Follow-up: then write tests", "  Steering: use the other file"}, nil)
	d.key(tea.KeyUp)
	d.key(tea.KeyCtrlU)
	d.runes("use main.go")
	d.key(tea.KeyEnter)
	d.untilScreen("Steering: use main.go")
	d.send(altUp)
	d.until("the follow-up picked", func() bool { return d.m.input.Value() == "then write tests" })
	d.key(tea.KeyCtrlU)
	d.key(tea.KeyEnter)
	d.until("the follow-up removed", func() bool { return !strings.Contains(d.m.View(), "Follow-up: then write tests") })

	other := served(t, session, nil)
	if err := other.FollowUp(context.Background(), "from elsewhere"); err != nil {
		t.Fatal(err)
	}
	d.untilScreen("Follow-up: from elsewhere")
	d.send(altUp)
	d.until("the other client's follow-up picked", func() bool { return d.m.input.Value() == "from elsewhere" })
	q, err := other.Queue(context.Background())
	if err != nil || len(q) != 2 {
		t.Fatalf("queue %+v %v", q, err)
	}
	if _, err := other.EditQueue(context.Background(), agent.EditQueuePayload{Action: agent.QueueRemove, ID: q[1].ID}); err != nil {
		t.Fatal(err)
	}
	d.runes(" too")
	d.key(tea.KeyEnter)
	d.until("the refusal, one line", func() bool {
		e := d.m.entries[len(d.m.entries)-1]
		return e.kind == entryError && strings.HasPrefix(e.text, `Could not change "from elsewhere": `) &&
			strings.HasSuffix(e.text, "was already removed") && !strings.Contains(e.text, "\n")
	})

	d.untilWithin("the steer delivered", time.Minute, func() bool { return d.m.prompt == nil })
	msgs, err := other.Messages(context.Background())
	var users []string
	for _, m := range msgs {
		if m.Role == agent.RoleUser {
			users = append(users, m.Text())
		}
	}
	if err != nil || strings.Join(users, "|") != "hello|use main.go" {
		t.Fatalf("user messages the model got: %q %v, want hello and the edited steer only", users, err)
	}
}

// Issue 40: the queue above the input is the session's, as its
// workflow holds it: a follow-up another client queues shows after this
// chat's steer, in delivery order, and goes when that client removes it;
// a chat opened meanwhile shows the queue it attaches to.
func TestServer_QueueShowsOtherClientsMessages(t *testing.T) {
	session := testserver.Session("tui-queue-others")
	d := newDriver(t, served(t, session, faults(60000, "503 Service Unavailable")))
	d.typeLine("hello")
	d.untilScreen("Retrying (1/3)")
	d.typeLine("use the other file")
	other := served(t, session, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := other.FollowUp(ctx, "from elsewhere"); err != nil {
		t.Fatal(err)
	}
	d.untilScreen("Steering: use the other file\nFollow-up: from elsewhere")
	d2 := newDriver(t, other)
	d2.untilScreen("Steering: use the other file\nFollow-up: from elsewhere")
	q, err := other.Queue(ctx)
	if err != nil || len(q) != 2 {
		t.Fatalf("queue %+v %v", q, err)
	}
	if _, err := other.EditQueue(ctx, agent.EditQueuePayload{Action: agent.QueueRemove, ID: q[1].ID}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*driver{d, d2} {
		c.until("the follow-up gone", func() bool { return !strings.Contains(c.m.View(), "from elsewhere") })
		c.shows("step 6", []string{"Steering: use the other file"}, nil)
	}
	d.key(tea.KeyEsc)
	d.untilScreen("Not delivered (retry cancelled): use the other file (back in the input)")
}

// A chat opened on a session whose prompt runs (detached earlier, or
// started by RPC) attaches to it: the retry in progress shows with its
// countdown and Esc cancels it.
func TestServer_AttachesToRunningPrompt(t *testing.T) {
	session := testserver.Session("tui-attach")
	b := served(t, session, faults(20000, "503 Service Unavailable"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := b.StartPrompt(ctx, "started elsewhere"); err != nil {
		t.Fatal(err)
	}
	k := &client.Controller{Client: worker.stack.Client, TaskQueue: worker.stack.Settings.Temporal.TaskQueue}
	testserver.WaitEvent(t, k, session, time.Minute, func(e agent.Event) bool { return e.Type == agent.EventAutoRetryStart })
	d := newDriver(t, b)
	d.untilScreen("Attached to the prompt already running")
	d.untilScreen("Retrying (1/3) in 20s… (esc to cancel)")
	d.key(tea.KeyEsc)
	d.untilScreen("Retry failed after 1 attempt: Retry cancelled")
}

// Issue 12 and 22: n asks for a reason (Backspace on an empty one goes
// back) and Enter denies; a allows the call and its like for the rest of
// the session, so the next such call is not asked about; y approves; Esc
// while a call waits aborts the prompt.
func TestServer_ApprovalsDenyAllowAndAbort(t *testing.T) {
	approve := func(s *settings.Settings) { s.Tools.RequireApproval = []string{"bash"} }
	d := newDriver(t, served(t, testserver.Session("tui-approve"), func(s *settings.Settings) {
		faults(100, `tool:bash {"command":"echo one"}`, `tool:bash {"command":"echo two"}`, `tool:bash {"command":"echo three"}`, "text:done")(s)
		approve(s)
	}))
	d.typeLine("hello")
	d.untilScreen("$ echo one")
	d.runes("n")
	d.untilScreen("Deny: why?")
	d.key(tea.KeyBackspace)
	d.shows("step 4", []string{"y: approve · n: deny"}, []string{"Deny: why?"})
	d.runes("n")
	d.runes("not now")
	d.key(tea.KeyEnter)
	d.untilScreen(": not now")
	d.untilScreen("$ echo two")
	d.runes("a")
	d.untilScreen(", and its like for the rest of the session.")
	d.untilScreen("done")
	d.until("prompt end", func() bool { return d.m.prompt == nil })
	if strings.Contains(d.m.View(), "$ echo three") {
		t.Errorf("the third bash call was asked about after a:\n%s", d.m.View())
	}
	if !strings.Contains(d.m.View(), "✓ bash echo three") {
		t.Errorf("the third bash call did not run:\n%s", d.m.View())
	}

	d = newDriver(t, served(t, testserver.Session("tui-approve-esc"), func(s *settings.Settings) {
		faults(100, `tool:bash {"command":"echo one"}`, "text:done")(s)
		approve(s)
	}))
	d.typeLine("hello")
	d.untilScreen("$ echo one")
	if _, esc := d.status(); esc != agent.SignalAbort {
		t.Errorf("esc while the call waits is bound to %q, want abort", esc)
	}
	d.key(tea.KeyEsc)
	d.untilScreen("Prompt aborted")
	d.shows("step 5", []string{"Message, or /help"}, []string{"Approve bash"})
}

// Issue 39 item 3: the stats line shows, while the prompt runs, the
// figure its budget compares (the state query's usage), not only the sum
// of its answers: here an overflow's compaction summary calls count
// before the prompt ends, while the retried call runs.
func TestServer_StatsLineShowsTheRunningUsage(t *testing.T) {
	session := testserver.Session("tui-usage")
	twoPrompts(t, session)
	b := served(t, session, keepLittle(faults(100, "overflow", "hang")))
	d := newDriver(t, b)
	d.typeLine("hello")
	d.untilScreen("Auto-compacted")
	d.until("the retried call", func() bool { text, _ := d.status(); return strings.HasPrefix(text, "Calling ") })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, err := b.State(ctx)
	if err != nil || st.Usage == nil || st.Usage.Tokens() == 0 {
		t.Fatalf("state %+v: %v", st, err)
	}
	if want := formatTokens(st.Usage.Tokens()) + " tokens"; !strings.Contains(d.m.statsLine(), want) {
		t.Errorf("stats line %q while the call runs, want the prompt's usage %s (state %+v)", d.m.statsLine(), want, *st.Usage)
	}
	d.key(tea.KeyEsc)
	d.until("prompt end", func() bool { return d.m.prompt == nil })
}
