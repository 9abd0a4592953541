package faults

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/rpc"
)

// rpcLines parses the JSON lines a `starter rpc` child wrote so far (a
// last line still being written is left out).
func rpcLines(t *testing.T, out string) []rpc.Line {
	t.Helper()
	var lines []rpc.Line
	for _, raw := range strings.SplitAfter(out, "\n") {
		if !strings.HasSuffix(raw, "\n") {
			break
		}
		l, err := rpc.DecodeLine([]byte(raw))
		if err != nil {
			t.Fatalf("stdout line %q is not a protocol line: %v", raw, err)
		}
		lines = append(lines, l)
	}
	return lines
}

// waitLine waits until the child's stdout has a line that ok accepts.
func waitLine(t *testing.T, p *starterProc, timeout time.Duration, what string, ok func(rpc.Line) bool) rpc.Line {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		for _, l := range rpcLines(t, p.stdout.String()) {
			if ok(l) {
				return l
			}
		}
		if p.exited() {
			t.Fatalf("starter rpc exited (code %d) before %s\nstderr:\n%s", p.code, what, p.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no %s within %v", what, timeout)
	return rpc.Line{}
}

// Spec 13.10 (RPC mode keeps following through an outage), end to end:
// `starter rpc` runs as a process and streams a prompt's answer when the
// Temporal server process is SIGKILLed in the middle of the stream and
// comes back two seconds later. The RPC process does not exit and writes
// no error response; the prompt's events go on after the restart up to
// prompt_end (completed: the call finished, or was lost and retried), the
// answer's text arrives whole in its message_end, and the server loop
// still answers a command afterwards. Closing stdin then ends it with 0.
func TestFaults_RPCFollowsThroughATemporalOutage(t *testing.T) {
	skipShort(t)
	dir, port := t.TempDir(), freePort(t)
	srv := spawnServer(t, dir, port)
	e := newEnv(t, srv.ready)
	reply := strings.TrimSpace(strings.Repeat("streamed words of a long answer ", 8))
	e.s.Scripted.Reply = reply
	e.s.Scripted.StreamDelayMs = 150
	e.startWorker()

	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdinR.Close()
	defer stdinW.Close()
	p := e.starterIn(stdinR, "rpc", "--session", "rpc-outage")
	send := func(line string) {
		t.Helper()
		if _, err := fmt.Fprintln(stdinW, line); err != nil {
			t.Fatalf("write to starter rpc: %v", err)
		}
	}

	send(`{"id":"p","type":"prompt","message":"tell me a long story"}`)
	ack := waitLine(t, p, time.Minute, "the prompt's response", func(l rpc.Line) bool { return l.Response != nil && l.Response.ID == "p" })
	if !ack.Response.Success {
		t.Fatalf("prompt refused: %+v", *ack.Response)
	}
	waitLine(t, p, time.Minute, "a message_update with text", func(l rpc.Line) bool {
		// A delta, not the answer's start frame: the answer is streaming.
		return l.Event != nil && l.Event.Type == agent.EventMessageUpdate && l.Event.AssistantMessageEvent != nil && l.Event.AssistantMessageEvent.Delta != ""
	})
	srv.kill()
	killedAt := time.Now()
	time.Sleep(2 * time.Second)
	if p.exited() {
		t.Fatalf("starter rpc exited (code %d) while the server was down\nstderr:\n%s", p.code, p.stderr.String())
	}
	restarted := spawnServer(t, dir, port)
	if restarted.ready != srv.ready {
		t.Fatalf("restarted server at %s, want %s", restarted.ready, srv.ready)
	}

	end := waitLine(t, p, 3*time.Minute, "prompt_end", func(l rpc.Line) bool {
		return l.Event != nil && l.Event.Type == agent.EventPromptEnd
	})
	t.Logf("prompt_end %v after the kill", time.Since(killedAt).Round(time.Millisecond))
	if end.Event.Status != agent.StatusCompleted {
		t.Fatalf("prompt_end %+v, want completed", *end.Event)
	}
	var answers []string
	var answerEntry string
	deltas := map[string]string{} // entry id -> its text deltas, concatenated
	var lastSeq int64
	for _, l := range rpcLines(t, p.stdout.String()) {
		if l.Response != nil && l.Response.ID != "p" {
			t.Errorf("an unexpected response: %+v", *l.Response)
		}
		if l.Event == nil {
			continue
		}
		if !live.IsLive(*l.Event) && !rpc.ConnectionEvent(l.Event.Type) { // live updates carry the seq of the event they follow; the connection's own events none
			if l.Event.Seq <= lastSeq {
				t.Errorf("event seq %d after %d: an event twice or out of order", l.Event.Seq, lastSeq)
			}
			lastSeq = l.Event.Seq
		}
		if ame := l.Event.AssistantMessageEvent; l.Event.Type == agent.EventMessageUpdate && ame != nil {
			deltas[l.Event.EntryID] += ame.Delta
		}
		if m := l.Event.Message; l.Event.Type == agent.EventMessageEnd && m != nil && m.Role == agent.RoleAssistant && m.StopReason != agent.StopReasonError {
			answers = append(answers, m.Text())
			answerEntry = l.Event.EntryID
		}
	}
	if len(answers) != 1 || answers[0] != reply {
		t.Fatalf("assistant answers %q, want the reply once", answers)
	}
	// A client that builds the text from the deltas gets the answer
	// exactly: no piece lost or repeated across the outage.
	if got := deltas[answerEntry]; got != reply {
		t.Fatalf("the answer's deltas add up to %q, want %q", got, reply)
	}

	send(`{"id":"s","type":"get_state"}`)
	st := waitLine(t, p, time.Minute, "get_state's response", func(l rpc.Line) bool { return l.Response != nil && l.Response.ID == "s" })
	if !st.Response.Success {
		t.Fatalf("get_state after the outage: %+v", *st.Response)
	}
	stdinW.Close()
	if code := p.wait(t, time.Minute); code != 0 {
		t.Fatalf("starter rpc exit %d after stdin closed\nstderr:\n%s", code, p.stderr.String())
	}
	t.Logf("stderr of starter rpc:\n%s", p.stderr.String())
}
