package e2e

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/rpcserver"
	"github.com/durableagent/durableagent/internal/testserver"
	"github.com/durableagent/durableagent/rpc"
)

// Design note of issue 6, pi 1.6: while a prompt runs, a prompt with
// streamingBehavior (steer or followUp), steer and follow_up are queued
// into it ("queued"); a prompt without it is "session busy", and so are
// compact and bash; a queued message carries images (issue 40).
// get_state during the backoff has every RpcSessionState field
// and ours (SPEC 8). abort is answered once the prompt ended (its
// prompt_end and agent_settled first), so a prompt right after it starts.
func TestRPC_PromptWhileRunning(t *testing.T) {
	s := server(t)
	c := startClient(t, s, testserver.Session("e2e-busy"), 60000, "503 Service Unavailable")
	c.prompt("one")
	c.waitEvent(agent.EventAutoRetryStart)

	r := c.ok(rpc.Command{Type: rpc.CmdGetState})
	st := decode[rpc.SessionState](t, r)
	if !st.IsRetrying || st.RetryAttempt != 1 || !st.AutoRetryEnabled || st.IsStreaming || st.Status != agent.StatusRunning ||
		st.Model == nil || st.Model.ID != s.Model.Name || st.Model.Provider != "scripted" {
		t.Errorf("state during the backoff = %+v", st)
	}
	for _, key := range []string{"autoRetryEnabled", "isRetrying", "retryAttempt", "isStreaming", "isCompacting", "autoCompactionEnabled", "sessionId", "messageCount", "model",
		"thinkingLevel", "steeringMode", "followUpMode", "pendingMessageCount"} {
		if !strings.Contains(string(r.Data), `"`+key+`"`) {
			t.Errorf("get_state data lacks %q: %s", key, r.Data)
		}
	}

	for _, tc := range []struct {
		line    string
		command string
		ok      bool
		err     string
	}{
		{`{"id":"s","type":"prompt","message":"go left","streamingBehavior":"steer"}`, "prompt", true, ""},
		{`{"id":"f","type":"prompt","message":"then tests","streamingBehavior":"followUp"}`, "prompt", true, ""},
		{`{"id":"s2","type":"steer","message":"faster"}`, "steer", true, ""},
		{`{"id":"f2","type":"follow_up","message":"and docs"}`, "follow_up", true, ""},
		{`{"id":"b","type":"prompt","message":"two"}`, "prompt", false, "session busy"},
		{`{"id":"i","type":"steer","message":"see","images":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`, "steer", true, ""},
		{`{"id":"c","type":"compact"}`, "compact", false, "session busy"},
		{`{"id":"x","type":"bash","command":"ls"}`, "bash", false, "bash after its prompt_end"},
	} {
		id := tc.line[len(`{"id":"`):strings.Index(tc.line, `","type"`)]
		c.sendRaw(tc.line)
		r := c.response(id)
		if r.Success != tc.ok || r.Command != tc.command || !strings.Contains(r.Error, tc.err) || (tc.ok && string(r.Data) != `{"disposition":"queued"}`) {
			t.Errorf("%s → %+v", tc.line, r)
		}
	}
	if st := c.state(); st.PendingMessageCount != 5 {
		t.Errorf("pendingMessageCount = %d, want 5", st.PendingMessageCount)
	}
	// Issue 40: clear_queue empties the running prompt's queue.
	r = c.ok(rpc.Command{Type: rpc.CmdClearQueue})
	if q := decode[rpc.QueueData](t, r); strings.Join(q.Steering, "|") != "go left|faster|see" || strings.Join(q.FollowUp, "|") != "then tests|and docs" {
		t.Errorf("clear_queue while the prompt runs = %s", r.Data)
	}
	if st := c.state(); st.PendingMessageCount != 0 {
		t.Errorf("pendingMessageCount after clear_queue = %d, want 0", st.PendingMessageCount)
	}

	abort := c.send(rpc.Command{Type: rpc.CmdAbort})
	var after []string
	for {
		l := c.next()
		if l.Response != nil && l.Response.ID == abort {
			if !l.Response.Success {
				t.Errorf("abort = %+v", *l.Response)
			}
			break
		}
		if e := l.Event; e != nil && (e.Type == agent.EventPromptEnd && e.Status == agent.StatusAborted || e.Type == rpc.EventAgentSettled && e.Aborted) {
			after = append(after, e.Type)
		}
	}
	if strings.Join(after, " ") != "prompt_end agent_settled" {
		t.Errorf("before abort's response: %v, want prompt_end aborted, then agent_settled aborted", after)
	}
	r = c.request(rpc.Command{Type: rpc.CmdPrompt, Message: "three"})
	if !r.Success || decode[rpc.PromptData](t, r).Disposition != rpc.DispositionStarted {
		t.Errorf("prompt right after abort = %+v, want started", r)
	}
	c.ok(rpc.Command{Type: rpc.CmdAbort})
}

// Issue 40, pi 1.6: queue_update follows every change to the queue, also
// one another client made: an edit_queue through another client reaches
// this connection without a command of its own (the workflow's
// queue_changed event), and the workflow's event is not written as is.
func TestRPC_QueueUpdateAfterAnotherClientsEdit(t *testing.T) {
	s := server(t)
	session := testserver.Session("e2e-queue-other")
	c := startClient(t, s, session, 60000, "503 Service Unavailable")
	c.prompt("one")
	c.waitEvent(agent.EventAutoRetryStart)
	c.ok(rpc.Command{Type: rpc.CmdSteer, Message: "go left"})
	c.ok(rpc.Command{Type: rpc.CmdFollowUp, Message: "then tests"})

	ctx := ctxFor(t, time.Minute)
	k := &client.Controller{Client: env.stack.Client, TaskQueue: s.Temporal.TaskQueue}
	q, err := k.Queue(ctx, session)
	if err != nil || len(q) != 2 {
		t.Fatalf("queue = %+v, %v", q, err)
	}
	if _, err := k.EditQueue(ctx, session, agent.EditQueuePayload{Action: agent.QueueEdit, ID: q[0].ID, Text: "go right"}); err != nil {
		t.Fatal(err)
	}
	for {
		c.waitEvent(rpc.EventQueueUpdate)
		if raw := c.lines[c.mark-1].raw; raw == `{"type":"queue_update","steering":["go right"],"followUp":["then tests"]}` {
			break
		}
	}
	if _, err := k.EditQueue(ctx, session, agent.EditQueuePayload{Action: agent.QueueRemove, ID: q[1].ID}); err != nil {
		t.Fatal(err)
	}
	for {
		c.waitEvent(rpc.EventQueueUpdate)
		if raw := c.lines[c.mark-1].raw; raw == `{"type":"queue_update","steering":["go right"],"followUp":[]}` {
			break
		}
	}
	for _, e := range c.events() {
		if e.Type == agent.EventQueueChanged {
			t.Errorf("the workflow's queue_changed was written: %+v", e)
		}
	}
	c.ok(rpc.Command{Type: rpc.CmdAbort})
}

// Issue 40, pi 1.6: queue_update follows every change to the queue
// whether this connection follows a prompt or not: connection a, idle,
// gets one queue_update per change of the queue of a prompt connection
// b started (b's steer, another client's remove), and none when b's
// prompt ends with the queue already empty.
func TestRPC_QueueUpdateOnIdleConnection(t *testing.T) {
	s := server(t)
	session := testserver.Session("e2e-queue-idle")
	a := startClient(t, s, session, 60000)
	a.ok(rpc.Command{Type: rpc.CmdGetCommands}) // a runs
	b := startClient(t, s, session, 60000, "503 Service Unavailable")
	b.prompt("one")
	b.waitEvent(agent.EventAutoRetryStart)
	b.ok(rpc.Command{Type: rpc.CmdSteer, Message: "go left"})
	queued := `{"type":"queue_update","steering":["go left"],"followUp":[]}`
	a.waitEvent(rpc.EventQueueUpdate)
	if raw := a.lines[a.mark-1].raw; raw != queued {
		t.Fatalf("idle connection's first queue_update = %s, want %s", raw, queued)
	}

	ctx := ctxFor(t, time.Minute)
	k := &client.Controller{Client: env.stack.Client, TaskQueue: s.Temporal.TaskQueue}
	q, err := k.Queue(ctx, session)
	if err != nil || len(q) != 1 {
		t.Fatalf("queue = %+v, %v", q, err)
	}
	if _, err := k.EditQueue(ctx, session, agent.EditQueuePayload{Action: agent.QueueRemove, ID: q[0].ID}); err != nil {
		t.Fatal(err)
	}
	a.waitEvent(rpc.EventQueueUpdate)
	if raw, want := a.lines[a.mark-1].raw, `{"type":"queue_update","steering":[],"followUp":[]}`; raw != want {
		t.Errorf("queue_update after the remove = %s, want %s", raw, want)
	}
	b.ok(rpc.Command{Type: rpc.CmdAbort})
	a.ok(rpc.Command{Type: rpc.CmdGetCommands})
	var updates []string
	for _, l := range a.lines {
		if l.Event != nil && l.Event.Type == rpc.EventQueueUpdate {
			updates = append(updates, l.raw)
		} else if l.Event != nil {
			t.Errorf("idle connection got %s", l.raw)
		}
	}
	if len(updates) != 2 {
		t.Errorf("idle connection's queue_update lines = %q, want one per change", updates)
	}
}

// SPEC 5/8: abort_retry and abort without a running prompt are harmless
// no-ops (plain success); set_auto_retry and set_auto_compaction answer
// plain success and change the state get_state reports. get_messages is
// the run context; get_last_assistant_text the last successful answer,
// or null; agent_settled follows prompt_end (pi 1.6's waitForIdle).
func TestRPC_ControlsAndMessages(t *testing.T) {
	s := server(t)
	session := testserver.Session("e2e-controls")
	c := startClient(t, s, session, 10, "503 Service Unavailable", "text:the answer")
	for _, line := range []string{
		`{"id":"1","type":"abort_retry"}`,
		`{"id":"2","type":"abort"}`,
		`{"id":"3","type":"set_auto_retry","enabled":false}`,
		`{"id":"4","type":"set_auto_compaction","enabled":false}`,
	} {
		c.sendRaw(line)
		if r := c.response(line[len(`{"id":"`) : len(`{"id":"`)+1]); !r.Success || r.Data != nil || r.Error != "" {
			t.Errorf("%s → %+v, want plain success", line, r)
		}
	}
	if st := c.state(); st.AutoRetryEnabled || st.AutoCompactionEnabled || st.SessionID != session || st.Status != agent.StatusIdle {
		t.Errorf("state = %+v, want both automatics off, idle session %s", st, session)
	}
	on := true
	c.ok(rpc.Command{Type: rpc.CmdSetAutoRetry, Enabled: &on})
	c.ok(rpc.Command{Type: rpc.CmdSetAutoCompaction, Enabled: &on})

	if r := c.ok(rpc.Command{Type: rpc.CmdGetLastAssistantText}); string(r.Data) != `{"text":null}` {
		t.Errorf("before any answer: data = %s, want {\"text\":null}", r.Data)
	}
	c.prompt("question")
	c.waitEvent(agent.EventPromptEnd)
	if l := c.next(); l.Event == nil || l.Event.Type != rpc.EventAgentSettled || l.Event.Aborted {
		t.Errorf("after prompt_end: %s, want agent_settled not aborted", l.raw)
	}
	msgs := decode[rpc.MessagesData](t, c.ok(rpc.Command{Type: rpc.CmdGetMessages})).Messages
	if len(msgs) != 2 || msgs[0].Text() != "question" || msgs[1].Text() != "the answer" {
		t.Errorf("messages = %+v, want the question and the answer (the failed attempt is not in the run context)", msgs)
	}
	if d := decode[rpc.LastAssistantTextData](t, c.ok(rpc.Command{Type: rpc.CmdGetLastAssistantText})); d.Text == nil || *d.Text != "the answer" {
		t.Errorf("last assistant text = %v", d.Text)
	}
}

// Issue 15 item 5, spec 13.11.4: a prompt terminated in Temporal ends the
// RPC prompt with an error response naming the terminate (not "may still
// be running"), and the session is free again.
func TestRPC_TerminatedPromptIsErrorResponseNamingIt(t *testing.T) {
	s := server(t)
	c := startClient(t, s, testserver.Session("e2e-terminated"), 60000, "503 Service Unavailable")
	p := decode[rpc.PromptData](t, c.ok(rpc.Command{ID: "p", Type: rpc.CmdPrompt, Message: "hello"}))
	c.waitEvent(agent.EventAutoRetryStart)
	if err := env.stack.Client.TerminateWorkflow(ctxFor(t, time.Minute), p.WorkflowID, p.RunID, "test"); err != nil {
		t.Fatal(err)
	}
	for {
		l := c.next()
		if r := l.Response; r != nil {
			if r.Success || r.ID != "p" || !strings.Contains(r.Error, "was terminated") || strings.Contains(r.Error, "may still be running") {
				t.Errorf("response = %+v, want an error for prompt p naming the terminate", *r)
			}
			break
		}
	}
	c.prompt("again")
	c.ok(rpc.Command{Type: rpc.CmdAbort})
}

// Switching to a new session while a prompt streams detaches it: its
// events stop (it keeps running in Temporal) and bash, refused while it
// streamed, runs in the new session.
func TestRPC_NewSessionDetachesTheRunningPrompt(t *testing.T) {
	s := server(t)
	c := startClient(t, s, testserver.Session("e2e-detach-switch"), 60000, "503 Service Unavailable")
	c.prompt("one")
	c.waitEvent(agent.EventAutoRetryStart)
	if r := c.request(rpc.Command{Type: rpc.CmdBash, Command: "echo ran"}); r.Success || !strings.HasPrefix(r.Error, "session busy") {
		t.Errorf("bash during a prompt = %+v", r)
	}
	if r := c.ok(rpc.Command{Type: rpc.CmdNewSession}); string(r.Data) != `{"cancelled":false}` {
		t.Fatalf("new_session = %+v", r)
	}
	r := c.ok(rpc.Command{Type: rpc.CmdBash, Command: "echo ran"})
	if d := decode[rpc.BashResult](t, r); d.Output != "ran" || d.ExitCode == nil || *d.ExitCode != 0 {
		t.Errorf("bash after the switch = %s", r.Data)
	}
}

// get_state puts the session's model, thinking level, queue modes, file
// and name on the workflow's state; cycle_model moves to the next
// available model; cycle_thinking_level goes through every level (issue
// 24), saying so in thinking_level_changed before its response, as
// set_session_name does in session_info_changed (pi 1.6); a fork error is
// an error response.
func TestRPC_StateModelsAndThinkingLevels(t *testing.T) {
	s := server(t)
	session := testserver.Session("e2e-state")
	c := startClientWith(t, s, session, []string{"--model.available", "scripted/scripted-2"}, 100)
	st := c.state()
	if st.Model == nil || st.Model.ID != "scripted-1" || st.ThinkingLevel != "off" || !strings.HasSuffix(st.SessionFile, "/"+session+".jsonl") ||
		st.SteeringMode != agent.QueueModeOneAtATime || st.Status != agent.StatusIdle || st.SessionID != session {
		t.Errorf("state = %+v", st)
	}
	if d := decode[rpc.CycleModelData](t, c.ok(rpc.Command{Type: rpc.CmdCycleModel})); d.Model.ID != "scripted-2" || d.ThinkingLevel != "off" || d.IsScoped {
		t.Errorf("cycle_model = %+v", d)
	}
	var cycled []string
	for range 7 {
		id := c.send(rpc.Command{Type: rpc.CmdCycleThinkingLevel})
		ev := c.next()
		level := decode[rpc.ThinkingLevelData](t, c.response(id)).Level
		if ev.raw != `{"type":"thinking_level_changed","level":"`+level+`"}` {
			t.Errorf("line before cycle_thinking_level's response = %s", ev.raw)
		}
		cycled = append(cycled, level)
	}
	if got := strings.Join(cycled, " "); got != "minimal low medium high xhigh max off" {
		t.Errorf("cycle_thinking_level from off went %s", got)
	}
	if d := decode[rpc.ThinkingLevelsData](t, c.ok(rpc.Command{Type: rpc.CmdGetAvailableThinkingLevels})); strings.Join(d.Levels, " ") != "off minimal low medium high xhigh max" {
		t.Errorf("get_available_thinking_levels = %v", d.Levels)
	}
	id := c.send(rpc.Command{Type: rpc.CmdSetSessionName, Name: "renamed"})
	if l := c.next(); l.raw != `{"type":"session_info_changed","name":"renamed"}` {
		t.Errorf("line after set_session_name = %s", l.raw)
	}
	c.response(id)
	if st := c.state(); st.SessionName != "renamed" || st.Model.ID != "scripted-2" {
		t.Errorf("state after the changes = %+v", st)
	}
	if r := c.request(rpc.Command{Type: rpc.CmdFork, EntryID: "x"}); r.Success || !strings.Contains(r.Error, "Invalid entry ID") {
		t.Errorf("fork = %+v", r)
	}
	if d := decode[rpc.ModelsData](t, c.ok(rpc.Command{Type: rpc.CmdGetAvailableModels})); len(d.Models) != 2 {
		t.Errorf("models = %+v", d)
	}
}

// Issue 6: "a later failure is an error response with the same id": when
// the prompt's events cannot be followed any more (here the connection to
// Temporal is cut for longer than the follower waits), the stream ends
// with an error response for the prompt, naming the last seq written and
// that the prompt may still run.
func TestRPC_BrokenEventStreamIsErrorResponseWithPromptID(t *testing.T) {
	s := server(t)
	session := testserver.Session("e2e-broken")
	cut := tcpProxy(t, s.Temporal.Address)
	cs := s
	cs.Temporal.Address = cut.addr
	// Backoffs of 60 s and 120 s: the prompt still runs when the follower
	// gives up (FollowGiveUp after the cut: about 10 s in all here).
	cs.Scripted.Faults, cs.Retry.BaseDelayMs = []string{"503 Service Unavailable", "503 Service Unavailable", "503 Service Unavailable"}, 60000
	ctx := ctxFor(t, 2*time.Minute)
	cl, err := client.Dial(ctx, cs, testserver.Quiet())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	k, err := client.NewController(cl, cs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := client.Open(k, cs, session)
	if err != nil {
		t.Fatal(err)
	}
	b.FollowGiveUp = 2 * time.Second
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		err := (&rpcserver.Server{Backend: b}).Serve(ctx, inR, outW)
		outW.Close()
		served <- err
	}()
	c := newProc(t, inW, outR, func() error { return <-served }, func() { inR.Close() })

	c.ok(rpc.Command{ID: "p", Type: rpc.CmdPrompt, Message: "hello"})
	last := c.waitEvent(agent.EventAutoRetryStart)
	cut.close()
	began := time.Now()
	r := c.response("p")
	t.Logf("the follower gave up %s after the cut", time.Since(began).Round(time.Second))
	if r.Success || r.Command != rpc.CmdPrompt || !strings.Contains(r.Error, fmt.Sprintf("after seq %d", last.Seq)) ||
		!strings.Contains(r.Error, "may still be running") {
		t.Errorf("response = %+v, want the follow error for prompt p after seq %d", r, last.Seq)
	}
	ok := &client.Controller{Client: env.stack.Client, TaskQueue: s.Temporal.TaskQueue}
	if err := ok.Abort(ctx, session); err != nil {
		t.Errorf("abort the prompt left running: %v", err)
	}
}

// proxy forwards TCP connections to a target until closed.
type proxy struct {
	addr  string
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

// tcpProxy forwards connections on a loopback address to target.
func tcpProxy(t *testing.T, target string) *proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: l.Addr().String(), l: l}
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
	t.Cleanup(p.close)
	return p
}

// close stops accepting and cuts every forwarded connection.
func (p *proxy) close() {
	p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}
