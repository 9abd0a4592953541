package e2e

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/testserver"
	"github.com/durableagent/durableagent/retry"
	"github.com/durableagent/durableagent/rpc"
)

// SPEC 3/4/10 and issue 6: a retry chain driven through `starter rpc`
// produces the exact event sequence on stdout, each event once and in seq
// order, and events reach the client within the latency target.
func TestRPC_RetryChainExactEventSequence(t *testing.T) {
	s := server(t)
	session := testserver.Session("e2e-chain")
	c := startClient(t, s, session, 300, "503 Service Unavailable", "503 Service Unavailable")
	ctx := ctxFor(t, time.Minute)
	var rec recorder
	settled := make(chan struct{})
	c.OnEvent(func(e agent.Event) {
		rec.add(e)
		if e.Type == rpc.EventAgentSettled {
			close(settled)
		}
	})
	vis := watchVisibility(&client.Controller{Client: env.stack.Client, TaskQueue: s.Temporal.TaskQueue}, session)
	if _, err := c.Prompt(ctx, "hello"); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	end, err := c.WaitForIdle(ctx)
	if err != nil {
		t.Fatalf("WaitForIdle: %v", err)
	}
	if end.Status != agent.StatusCompleted {
		t.Fatalf("prompt ended %+v", end)
	}
	select { // listeners run on the client's dispatcher, after WaitForIdle may return
	case <-settled:
	case <-ctx.Done():
		t.Fatalf("no %s after prompt_end", rpc.EventAgentSettled)
	}
	evs := rec.events()
	want := "agent_start message_end agent_end auto_retry_start " +
		"agent_start message_end agent_end auto_retry_start " +
		"agent_start message_end agent_end auto_retry_end prompt_end"
	if got := types(evs); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	if last := evs[len(evs)-1]; last.Type != rpc.EventAgentSettled {
		t.Fatalf("last event %s, want %s after prompt_end: pi's waitForIdle waits for it", last.Type, rpc.EventAgentSettled)
	}
	evs = evs[:len(evs)-1]
	var seq int64
	for i, e := range evs {
		if client.IsLive(e) {
			// Live lines (the answers' start/done/error frames, deltas)
			// carry the seq of the workflow event before them.
			if e.Seq != seq {
				t.Fatalf("live event %d has seq %d, want %d (the event before it)", i, e.Seq, seq)
			}
			continue
		}
		if seq++; e.Seq != seq {
			t.Fatalf("event %d has seq %d: lost, duplicated or out of order", i, e.Seq)
		}
	}
	evs = contractOnly(evs)
	checks := []struct {
		i    int
		ok   bool
		what string
	}{
		{2, evs[2].WillRetry && evs[2].ErrorMessage == "503 Service Unavailable", "first agent_end willRetry with the error"},
		{3, evs[3].Attempt == 1 && evs[3].MaxAttempts == 3 && evs[3].DelayMs == 300 && evs[3].ErrorMessage == "503 Service Unavailable", "auto_retry_start 1/3 300ms"},
		{7, evs[7].Attempt == 2 && evs[7].MaxAttempts == 3 && evs[7].DelayMs == 600, "auto_retry_start 2/3 600ms"},
		{10, !evs[10].WillRetry && evs[10].StopReason == agent.StopReasonStop, "final agent_end willRetry=false"},
		{11, evs[11].Success && evs[11].Attempt == 2 && evs[11].FinalError == "", "auto_retry_end success attempt 2"},
	}
	for _, ch := range checks {
		if !ch.ok {
			t.Errorf("event %d (%s): want %s", ch.i, evs[ch.i].Type, ch.what)
		}
	}
	// The durable timers really waited: the retried call starts after the
	// delay (workflow time).
	if gap := evs[4].Time.Sub(evs[3].Time); gap < 300*time.Millisecond {
		t.Errorf("retry 1 started %s after auto_retry_start, want >= 300ms", gap)
	}
	// Latency, two ways. End to end: from the event's workflow time (the
	// start of the workflow task that emitted it, so an over-estimate that
	// includes the task's own processing) to the client's listener. RPC
	// path: from the moment the event first answered the events query to
	// the listener.
	endToEnd, path := rec.latencies(), vis.pipeline(&rec)
	eMin, eMed, eMax := spread(endToEnd)
	pMin, pMed, pMax := spread(path)
	t.Logf("latency over %d events: end to end min %s median %s max %s; RPC path min %s median %s max %s",
		len(evs), eMin, eMed, eMax, pMin, pMed, pMax)
	bound := latencySanity
	if os.Getenv(strictEnv) == "1" {
		bound = latencyTarget
	}
	if pMax > bound {
		t.Errorf("RPC path latency max %s exceeds %s (all: %v)", pMax, bound, path)
	}
	if eMax > bound {
		t.Errorf("end-to-end latency max %s exceeds %s (all: %v)", eMax, bound, endToEnd)
	}
}

// SPEC 5 over RPC: abort_retry during the backoff ends the chain with
// auto_retry_end {success:false, finalError:"Retry cancelled"} and the
// prompt fails at once, long before the 60 s timer.
func TestRPC_AbortRetryEndsChainWithRetryCancelled(t *testing.T) {
	s := server(t)
	session := testserver.Session("e2e-abort")
	c := startClient(t, s, session, 60000, "503 Service Unavailable")
	ctx := ctxFor(t, 45*time.Second)
	var rec recorder
	stateCh := make(chan rpc.SessionState, 1)
	errCh := make(chan error, 1)
	c.OnEvent(func(e agent.Event) {
		rec.add(e)
		if e.Type != agent.EventAutoRetryStart {
			return
		}
		st, err := c.GetState(ctx)
		stateCh <- st
		if err == nil {
			err = c.AbortRetry(ctx)
		}
		errCh <- err
	})
	began := time.Now()
	if _, err := c.Prompt(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	end, err := c.WaitForIdle(ctx)
	if err != nil {
		t.Fatalf("WaitForIdle: %v", err)
	}
	if err := <-errCh; err != nil {
		t.Fatalf("get_state/abort_retry: %v", err)
	}
	st := <-stateCh
	if !st.IsRetrying || st.RetryAttempt != 1 || !st.AutoRetryEnabled || st.Status != agent.StatusRunning ||
		st.SessionID != session || st.Model == nil || st.Model.ID != s.Model.Name || st.PendingRetry == nil {
		t.Errorf("state during backoff = %+v", st)
	}
	if elapsed := time.Since(began); elapsed > 30*time.Second {
		t.Errorf("prompt took %s: the 60 s timer was not cancelled", elapsed)
	}
	evs := rec.events()
	if got := types(evs); got != "agent_start message_end agent_end auto_retry_start auto_retry_end prompt_end" {
		t.Fatalf("events: %s", got)
	}
	evs = contractOnly(evs)
	if re := evs[4]; re.Success || re.Attempt != 1 || re.FinalError != retry.CancelledMessage {
		t.Errorf("auto_retry_end = %+v", re)
	}
	if end.Status != agent.StatusFailed || end.ErrorMessage != "Retry cancelled (last error: 503 Service Unavailable)" {
		t.Errorf("prompt_end = %+v", end)
	}
}

// Issue 6: closing stdin ends `starter rpc` with exit 0 and the prompt
// keeps running durably in Temporal; another client can then abort it.
func TestRPC_StdinCloseDetachesPromptThatKeepsRunning(t *testing.T) {
	s := server(t)
	session := testserver.Session("e2e-detach")
	c := startClient(t, s, session, 60000, "503 Service Unavailable")
	ctx := ctxFor(t, 45*time.Second)
	waiting := make(chan struct{})
	var once sync.Once
	c.OnEvent(func(e agent.Event) {
		if e.Type == agent.EventAutoRetryStart {
			once.Do(func() { close(waiting) })
		}
	})
	if _, err := c.Prompt(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-waiting:
	case <-ctx.Done():
		t.Fatal("no auto_retry_start")
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close = %v, want exit 0", err)
	}
	k := &client.Controller{Client: env.stack.Client, TaskQueue: s.Temporal.TaskQueue}
	st, err := k.State(ctx, session)
	if err != nil || st.Status != agent.StatusRunning || !st.IsRetrying {
		t.Fatalf("after detach: state %+v, %v; want still running and retrying", st, err)
	}
	// A new RPC process for the session sees it running, and aborts it.
	c2 := startClient(t, s, session, 60000)
	if st, err := c2.GetState(ctx); err != nil || !st.IsRetrying {
		t.Errorf("second client: state %+v, %v", st, err)
	}
	// Another prompt in the session is refused while this one runs.
	var ce *rpc.CommandError
	if _, err := c2.Prompt(ctx, "second"); !errors.As(err, &ce) || !strings.HasPrefix(ce.Message, "session busy") {
		t.Errorf("prompt while the detached one runs: %v, want session busy", err)
	}
	if err := c2.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	end, err := k.Follow(ctx, session, "", 0, func(agent.Event) {})
	if err != nil || end.Status != agent.StatusAborted {
		t.Errorf("prompt end = %+v, %v; want aborted", end, err)
	}
	if st, err := c2.GetState(ctx); err != nil || st.Status != rpc.StatusIdle || st.MessageCount == 0 {
		t.Errorf("idle state after the prompt = %+v, %v", st, err)
	}
}

// compact runs the Compact workflow between prompts; set_auto_compaction
// persists compaction.enabled, which get_state reports.
func TestRPC_CompactAndSetAutoCompaction(t *testing.T) {
	s := server(t)
	c := startClient(t, s, testserver.Session("e2e-compact"), 100)
	ctx := ctxFor(t, time.Minute)
	if _, err := c.Prompt(ctx, "hello"); err != nil {
		t.Fatal(err)
	}
	if end, err := c.WaitForIdle(ctx); err != nil || end.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v, %v", end, err)
	}
	d, err := c.Compact(ctx, "keep the greeting")
	var ce *rpc.CommandError
	if !errors.As(err, &ce) || ce.Message != rpc.NothingToCompactError {
		t.Errorf("compact of a two-message session = %+v, %v; want %q", d, err, rpc.NothingToCompactError)
	}
	for _, enabled := range []bool{false, true} {
		if err := c.SetAutoCompaction(ctx, enabled); err != nil {
			t.Fatal(err)
		}
		st, err := c.GetState(ctx)
		if err != nil || st.AutoCompactionEnabled != enabled || st.Status != rpc.StatusIdle || st.MessageCount != 2 {
			t.Errorf("state after set_auto_compaction %t = %+v, %v", enabled, st, err)
		}
	}
}

// SPEC 9 (note: a manual compaction's retries are told to whoever waits,
// and scripted.faults plays on its summary call): its summary call retries like a prompt's model call,
// and RPC shows it the same way: auto_retry_start / auto_retry_end before
// the compact response, and abort_retry (sent on auto_retry_start) ends a
// 60 s backoff at once with the compaction failed and nothing compacted.
func TestRPC_CompactRetriesAreEventsAndAbortRetryReachesThem(t *testing.T) {
	s := server(t)
	session := testserver.Session("e2e-compact-retry")
	keepLittle := []string{"--compaction.keepRecentTokens", "10"}
	ctx := ctxFor(t, 90*time.Second)
	c := startClientWith(t, s, session, keepLittle, 100)
	for _, msg := range []string{"hello", "again"} {
		if _, err := c.Prompt(ctx, msg); err != nil {
			t.Fatal(err)
		}
		if end, err := c.WaitForIdle(ctx); err != nil || end.Status != agent.StatusCompleted {
			t.Fatalf("prompt %q: %+v, %v", msg, end, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	// A 503 and a 60 s backoff, cancelled by abort_retry.
	c = startClientWith(t, s, session, keepLittle, 60000, "503 Service Unavailable")
	var rec recorder
	aborted := make(chan error, 1)
	c.OnEvent(func(e agent.Event) {
		rec.add(e)
		if e.Type == rpc.EventSummarizationRetryScheduled {
			aborted <- c.AbortRetry(ctx)
		}
	})
	// Events reach listeners on the client's dispatcher, after the
	// response may have returned: wait for the compaction's last event.
	compactionEnded := func(c *rpc.Client) <-chan struct{} {
		ch := make(chan struct{})
		var once sync.Once
		c.OnEvent(func(e agent.Event) {
			if e.Type == rpc.EventCompactionEnd {
				once.Do(func() { close(ch) })
			}
		})
		return ch
	}
	waitEnd := func(ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatal("no compaction_end")
		}
	}
	ended := compactionEnded(c)
	began := time.Now()
	_, err := c.Compact(ctx, "")
	var ce *rpc.CommandError
	if !errors.As(err, &ce) || !strings.Contains(ce.Message, "Retry cancelled") {
		t.Fatalf("compact with its retry cancelled = %v, want an error naming the cancelled retry", err)
	}
	if elapsed := time.Since(began); elapsed > 30*time.Second {
		t.Errorf("compact took %s: the 60 s timer was not cancelled", elapsed)
	}
	if err := <-aborted; err != nil {
		t.Errorf("abort_retry during the compaction's backoff: %v", err)
	}
	waitEnd(ended)
	// pi 1.6: a manual compact is framed by compaction_start/_end, and
	// its summary call's retries are summarization_retry_* events.
	const chain = "compaction_start summarization_retry_scheduled summarization_retry_finished compaction_end"
	evs := rec.events()
	if got := types(evs); got != chain {
		t.Fatalf("events of the compaction: %s, want %s", got, chain)
	}
	evs = evs[1:3]
	if st := evs[0]; st.Attempt != 1 || st.DelayMs < 60000 || !strings.Contains(st.ErrorMessage, "503") {
		t.Errorf("summarization_retry_scheduled = %+v", st)
	}
	if end := evs[1]; end.Success || end.FinalError != retry.CancelledMessage {
		t.Errorf("auto_retry_end = %+v", end)
	}
	if msgs, err := c.GetMessages(ctx); err != nil || len(msgs) != 4 {
		t.Errorf("context after the cancelled compaction: %d messages, %v; want the 4 messages, nothing compacted", len(msgs), err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	// A 503 retried after 100 ms: the events, then the result.
	c = startClientWith(t, s, session, keepLittle, 100, "503 Service Unavailable")
	var rec2 recorder
	c.OnEvent(rec2.add)
	ended = compactionEnded(c)
	res, err := c.Compact(ctx, "")
	if err != nil || res.Summary == "" || res.TokensBefore == 0 {
		t.Fatalf("compact retried once = %+v, %v", res, err)
	}
	waitEnd(ended)
	evs = rec2.events()
	if got := types(evs); got != chain {
		t.Fatalf("events of the retried compaction: %s, want %s", got, chain)
	}
	evs = evs[1:3]
	if end := evs[1]; !end.Success || end.Attempt != 1 {
		t.Errorf("auto_retry_end = %+v", end)
	}
}

// The raw protocol on the real process: bad lines get error responses and
// the next line is served; a prompt's retry chain streams on stdout; EOF
// ends the process with status 0. The transcript is logged (docs/rpc.md
// shows one).
func TestRPC_RawProtocolTranscript(t *testing.T) {
	s := server(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"rpc", "--session", testserver.Session("e2e-raw")}, starterArgs(s, 500, "503 Service Unavailable", "[529 overloaded_error] Overloaded")...)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = testWriter{t}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var transcript strings.Builder
	send := func(l string) {
		fmt.Fprintf(&transcript, "> %s\n", l)
		if _, err := io.WriteString(stdin, l+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() rpc.Line {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("stdout ended")
			}
			fmt.Fprintf(&transcript, "< %s\n", l)
			dl, err := rpc.DecodeLine([]byte(l))
			if err != nil {
				t.Fatal(err)
			}
			return dl
		case <-time.After(30 * time.Second):
			t.Fatal("no line from starter rpc")
		}
		return rpc.Line{}
	}
	send(`this is not json`)
	if r := recv().Response; r == nil || r.Success || r.Command != "parse" {
		t.Fatalf("bad line answered %+v", r)
	}
	send(`{"id":"1","type":"set_auto_retry","enabled":"no"}`)
	if r := recv().Response; r == nil || r.Success || r.ID != "1" || !strings.Contains(r.Error, "must be a boolean") {
		t.Fatalf("wrongly typed field answered %+v", r)
	}
	send(`{"id":"2","type":"get_state"}`)
	if r := recv().Response; r == nil || !r.Success || !strings.Contains(string(r.Data), `"autoRetryEnabled":true`) {
		t.Fatalf("get_state answered %+v", r)
	}
	send(`{"id":"3","type":"prompt","message":"Summarise the retry policy"}`)
	if r := recv().Response; r == nil || !r.Success || r.ID != "3" {
		t.Fatalf("prompt answered %+v", r)
	}
	var evs []agent.Event
	for {
		l := recv()
		if l.Event == nil {
			t.Fatalf("unexpected response during the prompt: %+v", l.Response)
		}
		evs = append(evs, *l.Event)
		if l.Event.Type == agent.EventPromptEnd {
			break
		}
	}
	if got := types(evs); got != "agent_start message_end agent_end auto_retry_start agent_start message_end agent_end auto_retry_start agent_start message_end agent_end auto_retry_end prompt_end" {
		t.Errorf("events: %s", got)
	}
	if l := recv(); l.Event == nil || l.Event.Type != rpc.EventAgentSettled {
		t.Fatalf("after prompt_end: %+v, want %s", l, rpc.EventAgentSettled)
	}
	send(`{"id":"4","type":"get_last_assistant_text"}`)
	if r := recv().Response; r == nil || !r.Success || !strings.Contains(string(r.Data), `"text":"`) {
		t.Fatalf("get_last_assistant_text answered %+v", r)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("starter rpc after EOF: %v, want exit status 0", err)
	}
	t.Logf("transcript:\n%s", transcript.String())
}
