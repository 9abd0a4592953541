package rpcserver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/rpcserver"
	"github.com/durableagent/durableagent/internal/rpcserver/rpcfake"
	"github.com/durableagent/durableagent/rpc"
)

// A prompt sent while one runs is queued into it with streamingBehavior
// (steer or followUp) and answered with plain success; without it, it is
// "session busy". steer and follow_up do the same directly; images cannot
// be queued.
func TestServe_PromptWhileRunningWithStreamingBehavior(t *testing.T) {
	b := newFake(rpcfake.RetryChain(rpcfake.Chain{Errors: []string{"503 Service Unavailable"}, BaseDelay: time.Hour}))
	h := serve(t, &rpcserver.Server{Backend: b})
	h.send(`{"id":"p1","type":"prompt","message":"one"}`)
	h.response()
	h.eventsUntil(agent.EventAutoRetryStart)
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
		{`{"id":"i","type":"steer","message":"see","images":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`, "steer", false,
			"images are not supported in a queued message"},
	} {
		h.send(tc.line)
		r := h.response()
		if r.Success != tc.ok || r.Command != tc.command || !strings.Contains(r.Error, tc.err) || (tc.ok && string(r.Data) != `{"disposition":"queued"}`) {
			t.Errorf("%s → %+v", tc.line, r)
		}
	}
	want := "steer:go left,follow_up:then tests,steer:faster,follow_up:and docs"
	var got []string
	for _, c := range b.Calls() {
		if strings.HasPrefix(c, "steer:") || strings.HasPrefix(c, "follow_up:") {
			got = append(got, c)
		}
	}
	if strings.Join(got, ",") != want {
		t.Errorf("backend calls %q, want %s", got, want)
	}
	h.send(`{"id":"st","type":"get_state"}`)
	if st := decode[rpc.SessionState](t, h.response()); st.PendingMessageCount != 4 {
		t.Errorf("pendingMessageCount = %d, want 4", st.PendingMessageCount)
	}
}

// pi 1.6: steer and follow_up without a running prompt are queued (a
// queue_update says so, get_state counts them) and the next prompt
// receives them, steering first; clear_queue empties the queue and
// returns the texts.
func TestServe_SteerWhileIdleQueuesForTheNextPrompt(t *testing.T) {
	b := newFake(rpcfake.RetryChain(rpcfake.Chain{Errors: []string{"503 Service Unavailable"}, BaseDelay: time.Hour}))
	h := serve(t, &rpcserver.Server{Backend: b})
	h.send(`{"id":"f","type":"follow_up","message":"then docs"}`)
	if e := h.event(); e.Type != rpc.EventQueueUpdate {
		t.Fatalf("event = %+v, want queue_update", e)
	}
	if r := h.response(); !r.Success || string(r.Data) != `{"disposition":"queued"}` {
		t.Errorf("follow_up when idle = %+v", r)
	}
	h.send(`{"id":"s","type":"steer","message":"use go"}`)
	h.event()
	h.response()
	h.send(`{"id":"st","type":"get_state"}`)
	if st := decode[rpc.SessionState](t, h.response()); st.PendingMessageCount != 2 {
		t.Errorf("pendingMessageCount = %d, want 2", st.PendingMessageCount)
	}
	h.send(`{"id":"p","type":"prompt","message":"write it"}`)
	if r := h.response(); decode[rpc.PromptData](t, r).Disposition != "started" {
		t.Errorf("prompt = %+v", r)
	}
	if l := h.nextRaw(); l != `{"type":"queue_update","steering":[],"followUp":[]}` {
		t.Errorf("after the prompt's acknowledgement: %s", l)
	}
	// The first two are the signals that found no prompt running.
	if got := strings.Join(b.Calls(), ","); got != "follow_up:then docs,steer:use go,prompt:write it,steer:use go,follow_up:then docs" {
		t.Errorf("backend calls = %s", got)
	}

	// clear_queue while the prompt runs: its queue is in the workflow.
	h.send(`{"id":"c","type":"clear_queue"}`)
	for {
		l := h.next()
		if l.Response != nil {
			if l.Response.Success || !strings.Contains(l.Response.Error, "clear_queue while prompt") {
				t.Errorf("clear_queue while running = %+v", *l.Response)
			}
			break
		}
	}
}

func TestServe_ClearQueueReturnsTheIdleQueue(t *testing.T) {
	h := serve(t, &rpcserver.Server{Backend: newFake(nil)})
	h.send(`{"id":"s","type":"steer","message":"a"}`)
	h.event()
	h.response()
	h.send(`{"id":"f","type":"follow_up","message":"b"}`)
	if l := h.nextRaw(); l != `{"type":"queue_update","steering":["a"],"followUp":["b"]}` {
		t.Errorf("after follow_up: %s", l)
	}
	h.response()
	h.send(`{"id":"c","type":"clear_queue"}`)
	if l := h.nextRaw(); l != `{"type":"queue_update","steering":[],"followUp":[]}` {
		t.Errorf("after clear_queue: %s", l)
	}
	if r := h.response(); string(r.Data) != `{"steering":["a"],"followUp":["b"]}` {
		t.Errorf("clear_queue = %s", r.Data)
	}
	h.send(`{"id":"c2","type":"clear_queue"}`)
	if r := h.response(); string(r.Data) != `{"steering":[],"followUp":[]}` {
		t.Errorf("second clear_queue = %s", r.Data)
	}
}

// approve_tool reaches the backend's update with the decision and reason.
func TestServe_ApproveTool(t *testing.T) {
	b := newFake(rpcfake.RetryChain(rpcfake.Chain{Errors: []string{"503 Service Unavailable"}, BaseDelay: time.Hour}))
	h := serve(t, &rpcserver.Server{Backend: b})
	h.send(`{"id":"p","type":"prompt","message":"one"}`)
	h.response()
	h.eventsUntil(agent.EventAutoRetryStart)
	run, _ := b.Started(t.Context())
	run.Emit(agent.Event{Type: agent.EventToolApprovalRequest, ToolCallID: "c1", ToolName: "bash", Args: []byte(`{"command":"rm -rf x"}`)})
	if e := h.event(); e.Type != agent.EventToolApprovalRequest || e.ToolCallID != "c1" {
		t.Fatalf("event = %+v", e)
	}
	h.send(`{"id":"a","type":"approve_tool","toolCallId":"c1","approved":false,"reason":"not that"}`)
	if r := h.response(); !r.Success || r.Command != "approve_tool" {
		t.Errorf("approve_tool = %+v", r)
	}
	h.send(`{"id":"a2","type":"approve_tool","toolCallId":"c1","approved":true}`)
	if r := h.response(); r.Success || !strings.Contains(r.Error, "not waiting for approval") {
		t.Errorf("second decision = %+v", r)
	}
	if calls := strings.Join(b.Calls(), ","); !strings.Contains(calls, "approve_tool:c1:false:not that") {
		t.Errorf("calls = %s", calls)
	}
	// Issue 22: "scope": "session" reaches the update (allow for this session).
	h.send(`{"id":"a3","type":"approve_tool","toolCallId":"c1","approved":true,"scope":"session"}`)
	h.response()
	if calls := strings.Join(b.Calls(), ","); !strings.Contains(calls, "approve_tool:c1:true::scope=session") {
		t.Errorf("calls = %s", calls)
	}
}

// get_commands is an empty list; export_html a clear "not supported";
// the session commands need a backend that has sessions.
func TestServe_CommandsWithoutCounterpart(t *testing.T) {
	h := serve(t, &rpcserver.Server{Backend: newFake(nil)})
	for _, tc := range []struct{ line, data, err string }{
		{`{"id":"1","type":"get_commands"}`, `{"commands":[]}`, ""},
		{`{"id":"2","type":"export_html","outputPath":"/tmp/x.html"}`, "", "export_html is not supported"},
		{`{"id":"3","type":"new_session"}`, "", "new_session is not supported by this backend"},
		{`{"id":"4","type":"bash","command":"ls"}`, "", "bash is not supported by this backend"},
	} {
		h.send(tc.line)
		r := h.response()
		if string(r.Data) != tc.data || !strings.Contains(r.Error, tc.err) || r.Success != (tc.err == "") {
			t.Errorf("%s → %+v", tc.line, r)
		}
	}
}

// agent_end carries the messages of its agent run (after a retry: the
// run's own), as the terminal agent's does; willRetry stays.
func TestServe_AgentEndCarriesTheRunsMessages(t *testing.T) {
	b := newFake(rpcfake.RetryChain(rpcfake.Chain{Errors: []string{"503 Service Unavailable"}, BaseDelay: time.Millisecond, Reply: "the answer"}))
	h := serve(t, &rpcserver.Server{Backend: b})
	h.send(`{"id":"p","type":"prompt","message":"question"}`)
	h.response()
	var ends []agent.Event
	for _, e := range h.eventsUntil(agent.EventPromptEnd) {
		if e.Type == agent.EventAgentEnd {
			ends = append(ends, e)
		}
	}
	if len(ends) != 2 || !ends[0].WillRetry || ends[1].WillRetry {
		t.Fatalf("agent_end events = %+v", ends)
	}
	first, second := ends[0].Messages, ends[1].Messages
	// The fake's chain emits the answers' message_end only.
	if len(first) != 1 || first[0].StopReason != agent.StopReasonError || first[0].Usage == nil ||
		len(second) != 1 || second[0].Text() != "the answer" || second[0].Usage == nil {
		t.Errorf("messages: first run %+v, second run %+v", first, second)
	}
}

// pi 1.6: tool_execution_end has durationMs, the time since the call's
// tool_execution_start.
func TestServe_ToolExecutionEndHasDurationMs(t *testing.T) {
	b := newFake(rpcfake.RetryChain(rpcfake.Chain{Errors: []string{"503 Service Unavailable"}, BaseDelay: time.Hour}))
	h := serve(t, &rpcserver.Server{Backend: b})
	h.send(`{"id":"p","type":"prompt","message":"one"}`)
	h.response()
	h.eventsUntil(agent.EventAutoRetryStart)
	run, _ := b.Started(t.Context())
	at := time.Date(2026, 12, 4, 7, 0, 0, 0, time.UTC)
	run.Emit(agent.Event{Type: agent.EventToolExecutionStart, Time: at, ToolCallID: "c1", ToolName: "bash", Args: []byte(`{}`)})
	run.Emit(agent.Event{Type: agent.EventToolExecutionEnd, Time: at.Add(1234 * time.Millisecond), ToolCallID: "c1", ToolName: "bash",
		ToolResult: &agent.ToolResult{Content: []agent.ContentBlock{{Type: "text", Text: "ok"}}}})
	h.nextRaw()
	end := h.nextRaw()
	if !strings.Contains(end, `"type":"tool_execution_end"`) || !strings.HasSuffix(end, `,"durationMs":1234}`) {
		t.Errorf("tool_execution_end = %s", end)
	}
}

// pi's names for a prompt's compaction: compaction_start {reason} and
// compaction_end with the same reason.
func TestServe_PromptCompactionEventsHavePiNames(t *testing.T) {
	b := newFake(rpcfake.RetryChain(rpcfake.Chain{Errors: []string{"503 Service Unavailable"}, BaseDelay: time.Hour}))
	h := serve(t, &rpcserver.Server{Backend: b})
	h.send(`{"id":"p","type":"prompt","message":"one"}`)
	h.response()
	h.eventsUntil(agent.EventAutoRetryStart)
	run, _ := b.Started(t.Context())
	run.Emit(agent.Event{Type: agent.EventAutoCompactionStart, Reason: "overflow"})
	run.Emit(agent.Event{Type: agent.EventAutoCompactionEnd, WillRetry: true, Result: &agent.CompactionResult{Summary: "s", TokensBefore: 9}})
	start, end := h.event(), h.event()
	if start.Type != "compaction_start" || start.Reason != "overflow" {
		t.Errorf("start = %+v", start)
	}
	if end.Type != "compaction_end" || end.Reason != "overflow" || !end.WillRetry || end.Result == nil || end.Result.Summary != "s" {
		t.Errorf("end = %+v", end)
	}
}
