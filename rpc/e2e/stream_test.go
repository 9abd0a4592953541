package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/testserver"
	"github.com/durableagent/durableagent/workflows"
)

// Issue 11 end to end: live output through `starter rpc` (and `starter
// prompt`) on the embedded server, with a worker whose scripted model
// streams slower than the stream interval, so every word can show.

// streamReply is the slow worker's answer: 16 words at streamDelay each.
const (
	streamReply = "Streaming reaches the client word by word while the model call runs, and the history stays flat."
	streamDelay = 250 * time.Millisecond
)

// streamWorker starts a worker of its own on queue (stopped when the test
// ends) whose scripted model answers streamReply, pausing delay between
// words, and returns the settings a starter uses to reach it.
func streamWorker(t *testing.T, queue string, delay time.Duration) settings.Settings {
	t.Helper()
	s := server(t)
	s.Temporal.TaskQueue = queue
	s.Scripted.Reply = streamReply
	s.Scripted.StreamDelayMs = delay.Milliseconds()
	if want := app.StreamInterval(s); delay > 0 && delay <= want {
		t.Fatalf("stream delay %s must exceed the stream interval %s", delay, want)
	}
	w, err := app.NewWorker(env.stack.Client, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return s
}

// history is the event types of a session's prompt run, in order.
func history(t *testing.T, session string) []string {
	t.Helper()
	ctx := ctxFor(t, 30*time.Second)
	it := env.stack.Client.GetWorkflowHistory(ctx, workflows.WorkflowID(session), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var out []string
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.TrimPrefix(ev.GetEventType().String(), "EVENT_TYPE_"))
	}
	return out
}

// liveOf checks the message_update events of entry in evs: they come after
// its message_start and before its message_end, carry the seq of the
// workflow event before them, the attempt and growing output tokens, and
// with framed (RPC mode) the text block is framed by one text_start and
// one text_end (pi 1.6); it returns the deltas' text.
func liveOf(t *testing.T, evs []agent.Event, entry string, attempt int, framed bool) (text string, updates int) {
	t.Helper()
	started, ended, lastSeq, tokens := false, false, int64(0), 0
	var b strings.Builder
	starts, endText := 0, ""
	var answerFrames []string
	for _, e := range evs {
		if !live.IsLive(e) {
			lastSeq = e.Seq
		}
		switch {
		case e.Type == agent.EventMessageStart && e.EntryID == entry:
			started = true
		case e.Type == agent.EventMessageEnd && e.EntryID == entry:
			ended = true
		case e.Type == agent.EventMessageUpdate && e.EntryID == entry:
			a := e.AssistantMessageEvent
			if !started || ended {
				t.Fatalf("message_update of %s outside its message_start..message_end: %+v", entry, e)
			}
			if framed && a != nil && answerFrame(a.Type) {
				answerFrames = append(answerFrames, a.Type) // the answer's frames (pi 1.6), not its blocks
				continue
			}
			if framed && a != nil && a.Type == "text_start" && a.Attempt == attempt && e.Seq == lastSeq {
				starts++
				continue
			}
			if framed && a != nil && a.Type == "text_end" && a.Attempt == attempt && e.Seq == lastSeq {
				if endText != "" {
					t.Fatalf("a second text_end: %+v", e)
				}
				endText = "ended"
				continue
			}
			if a == nil || a.Type != "text_delta" || a.Attempt != attempt || e.Seq != lastSeq {
				t.Fatalf("message_update %+v (seq %d), want a text_delta of attempt %d with seq %d", a, e.Seq, attempt, lastSeq)
			}
			if a.OutputTokens < tokens {
				t.Fatalf("output tokens went down from %d to %d", tokens, a.OutputTokens)
			}
			tokens = a.OutputTokens
			b.WriteString(a.Delta)
			updates++
		}
	}
	if updates > 0 && tokens == 0 {
		t.Fatalf("message_update of %s never carried output tokens", entry)
	}
	if framed && (len(answerFrames) != 2 || answerFrames[0] != "start" || answerFrames[1] == "start") {
		t.Fatalf("message_update of %s: answer frames %v, want start then done or error", entry, answerFrames)
	}
	if framed && updates > 0 && (starts != 1 || endText == "") {
		t.Fatalf("message_update of %s: %d text_start and text_end %v, want one each around the deltas", entry, starts, endText != "")
	}
	return b.String(), updates
}

func assistantEnds(evs []agent.Event) []agent.Event {
	var out []agent.Event
	for _, e := range evs {
		if e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleAssistant {
			out = append(out, e)
		}
	}
	return out
}

// An RPC client sees the answer stream: message_update lines between
// message_start and message_end, over the seconds the call takes, whose
// deltas concatenate to exactly the final text; each carries the
// attempt. The run's history has the same events as the same answer
// given in one chunk: no event per delta.
func TestRPC_StreamedAnswerAddsUpAndLeavesHistoryFlat(t *testing.T) {
	s := streamWorker(t, "rpc-e2e-stream", streamDelay)
	session := testserver.Session("e2e-stream")
	c := startClient(t, s, session, 100)
	c.prompt("hello")
	if end := c.waitIdle(); end.Status != agent.StatusCompleted {
		t.Fatalf("prompt ended %+v", end)
	}
	evs := c.events()
	ends := assistantEnds(evs)
	if len(ends) != 1 || ends[0].Message.Text() != streamReply {
		t.Fatalf("assistant message_end %+v, want one with the reply", ends)
	}
	text, updates := liveOf(t, evs, ends[0].EntryID, 0, true)
	if text != streamReply {
		t.Fatalf("message_update deltas join to %q,\nwant %q", text, streamReply)
	}
	// 16 words, one every 250 ms, read after each heartbeat (200 ms):
	// most words come on their own.
	if updates < 8 {
		t.Fatalf("%d message_update lines for 16 words streamed over 4 s", updates)
	}
	// Streaming, not a burst at the end: the first delta reached the
	// client well before message_end.
	var first, end time.Time
	for _, l := range c.lines {
		if l.Event != nil && l.Event.Type == agent.EventMessageUpdate && first.IsZero() {
			first = l.at
		}
		if l.Event != nil && l.Event.Type == agent.EventMessageEnd && l.Event.EntryID == ends[0].EntryID {
			end = l.at
		}
	}
	if gap := end.Sub(first); gap < 2*time.Second {
		t.Fatalf("first delta %s before message_end, want the answer streaming over its 4 s", gap)
	}

	// The same answer in one chunk (no pause between words: it is all
	// there before the first throttled heartbeat leaves).
	one := streamWorker(t, "rpc-e2e-onechunk", 0)
	oneSession := testserver.Session("e2e-onechunk")
	c1 := startClient(t, one, oneSession, 100)
	c1.prompt("hello")
	if end := c1.waitIdle(); end.Status != agent.StatusCompleted {
		t.Fatalf("one-chunk prompt ended %+v", end)
	}
	// The same events but workflow tasks, in any order: the turn's
	// checkpoint runs beside the model call (docs/spec.md 20.1), so its
	// end may or may not have a workflow task of its own.
	streamed, chunk := history(t, session), history(t, oneSession)
	t.Logf("history: %d events streamed (%d message_update lines), %d in one chunk", len(streamed), updates, len(chunk))
	tasks := func(e string) bool { return strings.HasPrefix(e, "WorkflowTask") }
	if d := len(streamed) - len(chunk); d < -3 || d > 3 || slices.ContainsFunc(streamed, tasks) != slices.ContainsFunc(chunk, tasks) {
		t.Fatalf("history: %d events streamed, %d in one chunk: more than one workflow task apart", len(streamed), len(chunk))
	}
	streamed, chunk = slices.DeleteFunc(streamed, tasks), slices.DeleteFunc(chunk, tasks)
	slices.Sort(streamed)
	slices.Sort(chunk)
	if strings.Join(streamed, " ") != strings.Join(chunk, " ") {
		t.Fatalf("history differs with streaming:\nstreamed %v\none chunk %v", streamed, chunk)
	}
}

// A failed attempt's partial text is superseded: the first call streams
// part of the answer and times out (model.timeoutMs), its message_end has
// no text and nothing completes it; the retry's deltas carry attempt 1
// and add up to the retry's answer.
func TestRPC_RetrySupersedesPartialText(t *testing.T) {
	s := streamWorker(t, "rpc-e2e-stream-retry", streamDelay)
	const retryText = "The retry answers in full."
	session := testserver.Session("e2e-stream-retry")
	c := startClientWith(t, s, session, []string{"--model.timeoutMs", "2500", "--model.heartbeatTimeoutMs", "2000"}, 100, "ok", "text:"+retryText)
	c.prompt("hello")
	if end := c.waitIdle(); end.Status != agent.StatusCompleted {
		t.Fatalf("prompt ended %+v", end)
	}
	evs := c.events()
	ends := assistantEnds(evs)
	if len(ends) != 2 || ends[0].Message.StopReason != agent.StopReasonError || ends[1].Message.Text() != retryText {
		t.Fatalf("assistant message_ends %+v, want a timed-out call then the retry's answer", ends)
	}
	partial, n := liveOf(t, evs, ends[0].EntryID, 0, true)
	if n == 0 || partial == "" || len(partial) >= len(streamReply) || !strings.HasPrefix(streamReply, partial) {
		t.Fatalf("attempt 0 streamed %q in %d updates, want a proper prefix of the reply", partial, n)
	}
	text, m := liveOf(t, evs, ends[1].EntryID, 1, true)
	if m == 0 || text != retryText {
		t.Fatalf("attempt 1 streamed %q in %d updates, want %q", text, m, retryText)
	}
	// Temporal keeps the timed-out call's last heartbeat details in its
	// timeout failure: the one snapshot that enters history, bounded.
	hctx := ctxFor(t, 30*time.Second)
	it := env.stack.Client.GetWorkflowHistory(hctx, workflows.WorkflowID(session), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	timedOut := 0
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		a := ev.GetActivityTaskTimedOutEventAttributes()
		if a == nil {
			continue
		}
		timedOut++
		details := a.GetFailure().GetTimeoutFailureInfo().GetLastHeartbeatDetails()
		size := 0
		for _, p := range details.GetPayloads() {
			size += len(p.GetData())
		}
		t.Logf("the timed-out call's failure carries %d bytes of heartbeat details", size)
		if size > 12<<10 {
			t.Fatalf("a timed-out call put %d bytes of heartbeat details into history, want one bounded snapshot", size)
		}
	}
	if timedOut != 1 {
		t.Fatalf("%d ActivityTaskTimedOut events, want 1", timedOut)
	}
}

// `starter prompt --json` prints the live events too: message_update lines
// between message_start and message_end that add up to the answer.
func TestStarterPrompt_JSONIncludesMessageUpdates(t *testing.T) {
	s := streamWorker(t, "rpc-e2e-stream-json", streamDelay)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxFor(t, time.Minute)
	args := append([]string{"prompt", "--json", "--session", testserver.Session("e2e-json")}, starterArgs(s, 100)...)
	cmd := exec.CommandContext(ctx, exe, append(args, "hello")...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = testWriter{t}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("starter prompt --json: %v", err)
	}
	var evs []agent.Event
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e agent.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		evs = append(evs, e)
	}
	ends := assistantEnds(evs)
	if len(ends) != 1 {
		t.Fatalf("%d assistant message_ends in %d lines", len(ends), len(evs))
	}
	text, n := liveOf(t, evs, ends[0].EntryID, 0, false)
	if n < 4 || text != streamReply {
		t.Fatalf("%d message_update lines joining to %q", n, text)
	}
}

// On a terminal (a pseudo-terminal made by script(1)), `starter prompt`
// prints the answer as it streams: its first words are on the screen
// seconds before its last.
func TestStarterPrompt_TerminalPrintsTheAnswerAsItStreams(t *testing.T) {
	s := streamWorker(t, "rpc-e2e-stream-tty", streamDelay)
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("script(1) is not installed: no pseudo-terminal")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{exe, "prompt", "--session", testserver.Session("e2e-tty")}, starterArgs(s, 100)...)
	args = append(args, "hello")
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	ctx := ctxFor(t, time.Minute)
	cmd := exec.CommandContext(ctx, scriptBin, "-qfec", strings.Join(quoted, " "), "/dev/null")
	cmd.Env = append(os.Environ(), childEnv+"=1", "TERM=xterm")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var screen strings.Builder
	seen := map[string]time.Time{}
	firstWords, lastWords := "Streaming reaches the client", "the history stays flat."
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := stdout.Read(buf)
			mu.Lock()
			screen.Write(buf[:n])
			for _, w := range []string{firstWords, lastWords} {
				if _, ok := seen[w]; !ok && strings.Contains(screen.String(), w) {
					seen[w] = time.Now()
				}
			}
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("starter prompt on a terminal: %v", err)
	}
	<-done
	mu.Lock()
	defer mu.Unlock()
	first, okFirst := seen[firstWords]
	last, okLast := seen[lastWords]
	if !okFirst || !okLast {
		t.Fatalf("screen %q lacks the answer", screen.String())
	}
	if gap := last.Sub(first); gap < 2*time.Second {
		t.Fatalf("first words shown %s before the last: not streamed (screen %q)", gap, screen.String())
	}
	if n := strings.Count(screen.String(), lastWords); n != 1 {
		t.Fatalf("the answer's end shown %d times: %q", n, screen.String())
	}
}
