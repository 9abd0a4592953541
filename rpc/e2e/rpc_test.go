package e2e

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/live"
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
	vis := watchVisibility(&client.Controller{Client: env.stack.Client, TaskQueue: s.Temporal.TaskQueue}, session)
	c.prompt("hello")
	if end := c.waitIdle(); end.Status != agent.StatusCompleted {
		t.Fatalf("prompt ended %+v", end)
	}
	evs := c.events()
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
		if live.IsLive(e) {
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
	endToEnd, path := c.latencies(), vis.pipeline(c)
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
	began := time.Now()
	c.prompt("hello")
	c.waitEvent(agent.EventAutoRetryStart)
	st := c.state()
	if !st.IsRetrying || st.RetryAttempt != 1 || !st.AutoRetryEnabled || st.Status != agent.StatusRunning ||
		st.SessionID != session || st.Model == nil || st.Model.ID != s.Model.Name || st.PendingRetry == nil {
		t.Errorf("state during backoff = %+v", st)
	}
	c.ok(rpc.Command{Type: rpc.CmdAbortRetry})
	end := c.waitIdle()
	if elapsed := time.Since(began); elapsed > 30*time.Second {
		t.Errorf("prompt took %s: the 60 s timer was not cancelled", elapsed)
	}
	evs := c.events()
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
	c.prompt("hello")
	c.waitEvent(agent.EventAutoRetryStart)
	if err := c.close(); err != nil {
		t.Fatalf("close = %v, want exit 0", err)
	}
	k := &client.Controller{Client: env.stack.Client, TaskQueue: s.Temporal.TaskQueue}
	st, err := k.State(ctx, session)
	if err != nil || st.Status != agent.StatusRunning || !st.IsRetrying {
		t.Fatalf("after detach: state %+v, %v; want still running and retrying", st, err)
	}
	// A new RPC process for the session sees it running, and aborts it.
	c2 := startClient(t, s, session, 60000)
	if st := c2.state(); !st.IsRetrying {
		t.Errorf("second client: state %+v", st)
	}
	// Another prompt in the session is refused while this one runs.
	if r := c2.request(rpc.Command{Type: rpc.CmdPrompt, Message: "second"}); r.Success || !strings.HasPrefix(r.Error, "session busy") {
		t.Errorf("prompt while the detached one runs: %+v, want session busy", r)
	}
	c2.ok(rpc.Command{Type: rpc.CmdAbort})
	end, err := k.Follow(ctx, session, "", 0, func(agent.Event) {})
	if err != nil || end.Status != agent.StatusAborted {
		t.Errorf("prompt end = %+v, %v; want aborted", end, err)
	}
	if st := c2.state(); st.Status != agent.StatusIdle || st.MessageCount == 0 {
		t.Errorf("idle state after the prompt = %+v", st)
	}
}

// compact runs the Compact workflow between prompts; set_auto_compaction
// persists compaction.enabled, which get_state reports.
func TestRPC_CompactAndSetAutoCompaction(t *testing.T) {
	s := server(t)
	c := startClient(t, s, testserver.Session("e2e-compact"), 100)
	c.prompt("hello")
	if end := c.waitIdle(); end.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v", end)
	}
	if r := c.request(rpc.Command{Type: rpc.CmdCompact, CustomInstructions: "keep the greeting"}); r.Success || r.Error != rpc.NothingToCompactError {
		t.Errorf("compact of a two-message session = %+v; want %q", r, rpc.NothingToCompactError)
	}
	for _, enabled := range []bool{false, true} {
		c.ok(rpc.Command{Type: rpc.CmdSetAutoCompaction, Enabled: &enabled})
		if st := c.state(); st.AutoCompactionEnabled != enabled || st.Status != agent.StatusIdle || st.MessageCount != 2 {
			t.Errorf("state after set_auto_compaction %t = %+v", enabled, st)
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
	c := startClientWith(t, s, session, keepLittle, 100)
	for _, msg := range []string{"hello", "again"} {
		c.prompt(msg)
		if end := c.waitIdle(); end.Status != agent.StatusCompleted {
			t.Fatalf("prompt %q: %+v", msg, end)
		}
	}
	if err := c.close(); err != nil {
		t.Fatal(err)
	}

	// A 503 and a 60 s backoff, cancelled by abort_retry.
	c = startClientWith(t, s, session, keepLittle, 60000, "503 Service Unavailable")
	began := time.Now()
	compact := c.send(rpc.Command{Type: rpc.CmdCompact})
	c.waitEvent(rpc.EventSummarizationRetryScheduled)
	if r := c.request(rpc.Command{Type: rpc.CmdAbortRetry}); !r.Success {
		t.Errorf("abort_retry during the compaction's backoff: %+v", r)
	}
	if r := c.response(compact); r.Success || !strings.Contains(r.Error, "Retry cancelled") {
		t.Fatalf("compact with its retry cancelled = %+v, want an error naming the cancelled retry", r)
	}
	if elapsed := time.Since(began); elapsed > 30*time.Second {
		t.Errorf("compact took %s: the 60 s timer was not cancelled", elapsed)
	}
	// pi 1.6: a manual compact is framed by compaction_start/_end (before
	// its response), and its summary call's retries are
	// summarization_retry_* events.
	const chain = "compaction_start summarization_retry_scheduled summarization_retry_finished compaction_end"
	evs := c.events()
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
	if msgs := decode[rpc.MessagesData](t, c.ok(rpc.Command{Type: rpc.CmdGetMessages})).Messages; len(msgs) != 4 {
		t.Errorf("context after the cancelled compaction: %d messages; want the 4 messages, nothing compacted", len(msgs))
	}
	if err := c.close(); err != nil {
		t.Fatal(err)
	}

	// A 503 retried after 100 ms: the events, then the result.
	c = startClientWith(t, s, session, keepLittle, 100, "503 Service Unavailable")
	res := decode[agent.CompactionResult](t, c.ok(rpc.Command{Type: rpc.CmdCompact}))
	if res.Summary == "" || res.TokensBefore == 0 {
		t.Fatalf("compact retried once = %+v", res)
	}
	evs = c.events()
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
	c := startClient(t, s, testserver.Session("e2e-raw"), 500, "503 Service Unavailable", "[529 overloaded_error] Overloaded")
	send := c.sendRaw
	recv := func() rpc.Line {
		t.Helper()
		return c.next().Line
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
	if err := c.close(); err != nil {
		t.Errorf("starter rpc after EOF: %v, want exit status 0", err)
	}
	t.Logf("transcript:\n%s", c.trace.String())
}
