package tui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/rpcserver/rpcfake"
	"github.com/durableagent/durableagent/workflows"
)

// SPEC 10: on auto_retry_start Esc is bound to abort_retry and the loader
// reads "Retrying (attempt/maxAttempts) in Ns… (esc to cancel)", counting
// down every second; Esc cancels the retry and the final failure shows
// "Retry failed after N attempts: <finalError>".
func TestModel_RetryCountdownAndEscCancelsRetry(t *testing.T) {
	fake := rpcfake.New("s1")
	fake.Script = rpcfake.RetryChain(rpcfake.Chain{Errors: []string{"503 Service Unavailable"}, BaseDelay: 30 * time.Second})
	d := newDriver(t, fake)
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
	if calls := d.fake.Calls(); !slices.Equal(calls, []string{"prompt:hello", "abort_retry"}) {
		t.Errorf("backend calls = %v, want the prompt then abort_retry (not abort)", calls)
	}
	if !strings.Contains(d.m.View(), "Prompt aborted: Retry cancelled (last error: 503 Service Unavailable)") {
		t.Errorf("screen lacks the prompt's failure:\n%s", d.m.View())
	}
}

// SPEC 10: on auto_retry_end (and when the retried call starts) the
// previous Esc binding (abort) and loader come back; compaction shows its
// own loader, prefixed for an overflow, and restores the previous one.
func TestModel_LoaderAndEscBindingFollowEvents(t *testing.T) {
	fake := rpcfake.New("s1")
	d := newDriver(t, fake)
	d.typeLine("hello")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	run, err := fake.Started(ctx)
	if err != nil {
		t.Fatal(err)
	}
	working := "Working… (esc to abort)"
	steps := []struct {
		name   string
		events []agent.Event
		loader string
		esc    string
	}{
		{"call runs", []agent.Event{{Type: agent.EventAgentStart}}, working, agent.SignalAbort},
		{"backoff", []agent.Event{
			{Type: agent.EventMessageEnd, Message: &agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonError, ErrorMessage: "overloaded"}},
			{Type: agent.EventAgentEnd, WillRetry: true},
			{Type: agent.EventAutoRetryStart, Attempt: 2, MaxAttempts: 5, DelayMs: 4000, ErrorMessage: "overloaded"},
		}, "Retrying (2/5) in 4s… (esc to cancel)", agent.SignalAbortRetry},
		{"retried call runs", []agent.Event{{Type: agent.EventAgentStart}}, working, agent.SignalAbort},
		{"retry succeeded", []agent.Event{{Type: agent.EventAgentEnd}, {Type: agent.EventAutoRetryEnd, Success: true, Attempt: 2}}, working, agent.SignalAbort},
		{"overflow compaction", []agent.Event{{Type: agent.EventAutoCompactionStart, Reason: "overflow"}},
			"Context overflow detected, Auto-compacting… (esc to cancel)", agent.SignalAbort},
		{"compaction ended", []agent.Event{{Type: agent.EventAutoCompactionEnd, WillRetry: true,
			Result: &agent.CompactionResult{TokensBefore: 150000}}}, working, agent.SignalAbort},
		{"threshold compaction", []agent.Event{{Type: agent.EventAutoCompactionStart, Reason: "threshold"}},
			"Auto-compacting… (esc to cancel)", agent.SignalAbort},
		{"threshold compaction ended", []agent.Event{{Type: agent.EventAutoCompactionEnd}}, working, agent.SignalAbort},
		{"prompt ended", []agent.Event{{Type: agent.EventPromptEnd, Status: agent.StatusCompleted}}, "", ""},
	}
	for _, s := range steps {
		for _, e := range s.events {
			run.Emit(e)
		}
		last := run.Events()[len(run.Events())-1].Seq
		d.until(s.name, func() bool { return d.m.lastSeq == last })
		if text, esc := d.status(); text != s.loader || esc != s.esc {
			t.Errorf("%s: loader %q esc %q, want %q esc %q", s.name, text, esc, s.loader, s.esc)
		}
	}
	if strings.Contains(d.m.View(), "Retry failed") {
		t.Errorf("a successful chain shows a failure:\n%s", d.m.View())
	}
}

// SPEC 4/10: a chain that runs out of retries shows "Retry failed after N
// attempts: <finalError>".
func TestModel_FinalRetryFailure(t *testing.T) {
	fake := rpcfake.New("s1")
	fake.Script = rpcfake.RetryChain(rpcfake.Chain{Errors: []string{"529 overloaded", "529 overloaded", "529 overloaded", "529 overloaded"},
		BaseDelay: time.Millisecond})
	d := newDriver(t, fake)
	d.typeLine("hello")
	d.untilScreen("Retry failed after 3 attempts: 529 overloaded")
	d.until("idle", func() bool { text, _ := d.status(); return text == "" })
}

// Slash commands call the backend (or not, for bad input) and show the
// outcome.
func TestModel_SlashCommands(t *testing.T) {
	cases := []struct {
		name  string
		line  string
		calls []string
		shows string
	}{
		{"retry off", "/retry off", []string{"set_auto_retry:false"}, "Auto-retry off (retry.enabled=false saved)."},
		{"retry on", "/retry on", []string{"set_auto_retry:true"}, "Auto-retry on"},
		{"retry without on or off", "/retry maybe", nil, "usage: /retry on|off"},
		{"compact", "/compact keep the plan", []string{"compact:keep the plan"}, "Compacted 1200 tokens into a summary (entry c1)."},
		{"state", "/state", nil, "autoRetryEnabled true · isRetrying false"},
		{"help", "/help", nil, "/retry on|off"},
		{"unknown", "/reboot", nil, `unknown command "/reboot"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fake := rpcfake.New("s1")
			fake.CompactFunc = func(_ context.Context, instr string, _ func(agent.Event)) (workflows.CompactResult, error) {
				return workflows.CompactResult{Result: &agent.CompactionResult{TokensBefore: 1200, EntryID: "c1"}}, nil
			}
			d := newDriver(t, fake)
			d.typeLine(c.line)
			d.untilScreen(c.shows)
			if calls := d.fake.Calls(); !slices.Equal(calls, c.calls) {
				t.Errorf("backend calls = %v, want %v", calls, c.calls)
			}
		})
	}
}

// /compact shows its loader until the backend answers; an error is shown.
func TestModel_CompactErrorShown(t *testing.T) {
	fake := rpcfake.New("s1")
	release := make(chan struct{})
	fake.CompactFunc = func(context.Context, string, func(agent.Event)) (workflows.CompactResult, error) {
		<-release
		return workflows.CompactResult{}, errors.New("compaction of session s1 failed: summary call: 503 Service Unavailable")
	}
	d := newDriver(t, fake)
	d.typeLine("/compact")
	if text, esc := d.status(); text != "Compacting… (esc to cancel)" || esc != agent.SignalAbort {
		t.Errorf("loader %q esc %q during /compact", text, esc)
	}
	close(release)
	d.untilScreen("compact: compaction of session s1 failed")
	if text, _ := d.status(); text != "" {
		t.Errorf("loader after /compact = %q", text)
	}
}

// SPEC 9 (note) and 10: a manual compaction whose summary call waits out a 503 shows the retry
// countdown with Esc bound to abort_retry, which reaches the compaction;
// the failure that follows is shown and the loader goes away.
func TestModel_CompactRetryCountdownAndEscCancelsIt(t *testing.T) {
	fake := rpcfake.New("s1")
	fake.CompactFunc = rpcfake.SummaryRetryUntilAborted(fake, "503 Service Unavailable", 30000)
	d := newDriver(t, fake)
	d.typeLine("/compact")
	d.untilScreen("Compacting: summary retry (1/3) in 30s… (esc to cancel the retry)")
	if _, esc := d.status(); esc != agent.SignalAbortRetry {
		t.Fatalf("esc bound to %q during the summary's backoff, want abort_retry", esc)
	}
	d.advance(time.Second)
	if text, _ := d.status(); !strings.Contains(text, "in 29s…") {
		t.Errorf("after a second the loader reads %q", text)
	}
	d.key(tea.KeyEsc)
	d.untilScreen("compact: compaction of session s1 failed: Retry cancelled")
	if !strings.Contains(d.m.View(), "Retry failed after 1 attempt: Retry cancelled") {
		t.Errorf("screen lacks the retry's end:\n%s", d.m.View())
	}
	if text, esc := d.status(); text != "" || esc != "" {
		t.Errorf("loader after the compaction = %q (esc %q)", text, esc)
	}
	if calls := fake.Calls(); !slices.Equal(calls, []string{"compact:", "abort_retry"}) {
		t.Errorf("backend calls = %v, want compact then abort_retry", calls)
	}
}

// /quit quits; a message typed while a prompt runs steers it (issue 12)
// rather than starting a second prompt; during /compact Enter is refused
// without reaching the backend, and the text stays in the input.
func TestModel_QuitSteerAndBusy(t *testing.T) {
	fake := rpcfake.New("s1")
	release := make(chan struct{})
	fake.CompactFunc = func(context.Context, string, func(agent.Event)) (workflows.CompactResult, error) {
		<-release
		return workflows.CompactResult{NothingToCompact: true}, nil
	}
	d := newDriver(t, fake)
	d.typeLine("/compact")
	d.typeLine("too early")
	d.untilScreen("Busy: wait for the session to load, the prompt to start or the compaction to end")
	if got := d.m.input.Value(); got != "too early" {
		t.Errorf("input after a refused Enter = %q, want the text kept", got)
	}
	close(release)
	d.untilScreen("Nothing to compact")
	d.m.input.Reset()

	fake.Script = rpcfake.RetryChain(rpcfake.Chain{Errors: []string{"503 Service Unavailable"}, BaseDelay: time.Hour})
	d.typeLine("first")
	d.untilScreen("Retrying (1/3)")
	d.typeLine("second")
	d.untilScreen("Steering: second")
	d.until("steer sent", func() bool { return len(d.fake.Calls()) == 3 })
	if calls := d.fake.Calls(); !slices.Equal(calls, []string{"compact:", "prompt:first", "steer:second"}) {
		t.Errorf("backend calls = %v, want compact, the first prompt, then steer (no second prompt)", calls)
	}
	d.typeLine("/quit")
	d.until("quit", func() bool { return d.quit })
	if d.m.View() != "" {
		t.Errorf("view after quit = %q, want empty", d.m.View())
	}
}

// A chat opened on a session whose prompt runs (detached earlier, or
// started by RPC) attaches to it: the retry in progress shows with its
// countdown and Esc cancels it.
func TestModel_AttachesToRunningPrompt(t *testing.T) {
	fake := rpcfake.New("s1")
	fake.Script = rpcfake.RetryChain(rpcfake.Chain{Errors: []string{"503 Service Unavailable"}, BaseDelay: 20 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := fake.StartPrompt(ctx, "started elsewhere"); err != nil {
		t.Fatal(err)
	}
	run, err := fake.Started(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the script reached its backoff.
	wctx, reached := context.WithCancel(ctx)
	_, _ = fake.Follow(wctx, run.ID, 0, func(e agent.Event) {
		if e.Type == agent.EventAutoRetryStart {
			reached()
		}
	})
	if ctx.Err() != nil {
		t.Fatal("the script did not reach the backoff")
	}
	d := newDriver(t, fake)
	d.untilScreen("Attached to the prompt already running")
	d.untilScreen("Retrying (1/3) in 20s… (esc to cancel)")
	d.key(tea.KeyEsc)
	d.untilScreen("Retry failed after 1 attempt: Retry cancelled")
}
