package rpcserver_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/rpcserver"
	"github.com/durableagent/durableagent/internal/rpcserver/rpcfake"
	"github.com/durableagent/durableagent/retry"
	"github.com/durableagent/durableagent/rpc"
	"github.com/durableagent/durableagent/workflows"
)

// Issue 6: bad input never kills the loop; every bad line gets an error
// response (command = the type, or "parse") and the next line is served.
func TestServe_BadInputNeverEndsTheLoop(t *testing.T) {
	cases := []struct {
		name    string
		line    string
		id      string
		command string
		err     string
	}{
		{"not JSON", `hello`, "", "parse", "Failed to parse command: invalid JSON"},
		{"truncated JSON", `{"type":"get_state"`, "", "parse", "invalid JSON"},
		{"array", `[1,2]`, "", "parse", "must be a JSON object, got an array"},
		{"null", `null`, "", "parse", "must be a JSON object, got null"},
		{"string", `"prompt"`, "", "parse", "must be a JSON object, got a string"},
		{"missing type", `{"id":"a"}`, "a", "parse", `missing field "type"`},
		{"type not a string", `{"id":"a","type":5}`, "a", "parse", `field "type" must be a string, got a number`},
		{"unknown type", `{"id":"a","type":"reboot"}`, "a", "reboot", `Unknown command: reboot`},
		{"bad streaming behaviour", `{"id":"a","type":"prompt","message":"x","streamingBehavior":"later"}`, "a", "prompt", `field "streamingBehavior" is "later", want "steer" or "followUp"`},
		{"image not base64", `{"id":"a","type":"prompt","message":"x","images":[{"type":"image","data":"%%","mimeType":"image/png"}]}`, "a", "prompt", `images[0] data is not base64`},
		{"images not a list", `{"id":"a","type":"prompt","message":"x","images":{"type":"image"}}`, "a", "prompt", `field "images" must be an array, got an object`},
		{"bad thinking level", `{"id":"a","type":"set_thinking_level","level":"maximum"}`, "a", "set_thinking_level", `field "level" is "maximum", want one of off, minimal, low, medium, high, xhigh, max`},
		{"bad queue mode", `{"id":"a","type":"set_steering_mode","mode":"some"}`, "a", "set_steering_mode", `field "mode" is "some", want "all" or "one-at-a-time"`},
		{"approve without decision", `{"id":"a","type":"approve_tool","toolCallId":"c"}`, "a", "approve_tool", `missing field "approved" (a boolean)`},
		{"blank bash command", `{"id":"a","type":"bash","command":" "}`, "a", "bash", `field "command" is empty`},
		{"excludeFromContext not a boolean", `{"id":"a","type":"bash","command":"ls","excludeFromContext":"yes"}`, "a", "bash", `field "excludeFromContext" must be a boolean, got a string`},
		{"id not a string", `{"id":7,"type":"get_state"}`, "", "get_state", `field "id" must be a string, got a number`},
		{"missing enabled", `{"id":"a","type":"set_auto_retry"}`, "a", "set_auto_retry", `missing field "enabled" (a boolean)`},
		{"null enabled", `{"id":"a","type":"set_auto_retry","enabled":null}`, "a", "set_auto_retry", `missing field "enabled"`},
		{"enabled as string", `{"id":"a","type":"set_auto_retry","enabled":"yes"}`, "a", "set_auto_retry", `field "enabled" must be a boolean, got a string`},
		{"misspelt field", `{"id":"a","type":"set_auto_retry","enable":false}`, "a", "set_auto_retry", `unknown field "enable"`},
		{"field of another command", `{"id":"a","type":"abort","message":"x"}`, "a", "abort", `unknown field "message"`},
		{"missing message", `{"id":"a","type":"prompt"}`, "a", "prompt", `missing field "message" (a string)`},
		{"message not a string", `{"id":"a","type":"prompt","message":["hi"]}`, "a", "prompt", `field "message" must be a string, got an array`},
		{"blank message", `{"id":"a","type":"prompt","message":"  "}`, "a", "prompt", `field "message" is empty`},
		{"compaction enabled as number", `{"id":"a","type":"set_auto_compaction","enabled":1}`, "a", "set_auto_compaction", `must be a boolean, got a number`},
		{"invalid UTF-8", "{\"id\":\"a\",\"type\":\"prompt\",\"message\":\"\xff\xfe\"}", "", "parse", "not valid UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newFake(nil)
			h := serve(t, &rpcserver.Server{Backend: b})
			h.send(c.line)
			h.send(`{"id":"next","type":"get_state"}`)
			r := h.response()
			if r.Success || r.ID != c.id || r.Command != c.command || !strings.Contains(r.Error, c.err) {
				t.Errorf("response = %+v, want error for id %q command %q containing %q", r, c.id, c.command, c.err)
			}
			if r.Type != rpc.ResponseType {
				t.Errorf("type = %q, want %q", r.Type, rpc.ResponseType)
			}
			if next := h.response(); !next.Success || next.ID != "next" {
				t.Errorf("the line after the bad one was not served: %+v", next)
			}
			if err := h.closeInput(); err != nil {
				t.Errorf("Serve = %v, want nil", err)
			}
			if calls := b.Calls(); len(calls) != 0 {
				t.Errorf("a bad command reached the backend: %v", calls)
			}
		})
	}
}

// Issue 6: a line over the maximum (1 MiB by default) is answered with
// "line too long (N bytes, max M)" and the loop keeps serving.
func TestServe_LineTooLongIsAnErrorAndTheLoopGoesOn(t *testing.T) {
	cases := []struct {
		name string
		max  int
		line string
		want string
	}{
		{"default max plus one", 0, `{"type":"prompt","message":"` + strings.Repeat("x", rpcserver.DefaultMaxLineBytes) + `"}`,
			"line too long (1048606 bytes, max 1048576)"},
		{"small max", 40, `{"type":"prompt","message":"` + strings.Repeat("y", 100) + `"}`,
			"line too long (130 bytes, max 40)"},
		{"small max with CRLF", 40, `{"type":"prompt","message":"` + strings.Repeat("y", 100) + "\"}\r",
			"line too long (131 bytes, max 40)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := serve(t, &rpcserver.Server{Backend: newFake(nil), MaxLineBytes: c.max})
			h.send(c.line)
			h.send(`{"id":"next","type":"get_state"}`)
			if r := h.response(); r.Success || r.Command != rpc.ParseCommand || r.Error != c.want {
				t.Errorf("response = %+v, want parse error %q", r, c.want)
			}
			if r := h.response(); !r.Success || r.ID != "next" {
				t.Errorf("next line not served: %+v", r)
			}
		})
	}
}

// Blank lines and a last line without a newline are handled like a
// terminal user would expect: ignored, and served.
func TestServe_BlankLinesIgnoredLastLineWithoutNewlineServed(t *testing.T) {
	h := serve(t, &rpcserver.Server{Backend: newFake(nil)})
	h.send("")
	h.send("   \r")
	if _, err := h.in.Write([]byte(`{"id":"last","type":"get_state"}`)); err != nil {
		t.Fatal(err)
	}
	h.in.Close()
	if r := h.response(); !r.Success || r.ID != "last" {
		t.Errorf("response = %+v, want get_state success for id last", r)
	}
	if err := <-h.done; err != nil {
		t.Errorf("Serve = %v", err)
	}
}

// Design note of issue 6: a prompt while one runs is refused with
// "session busy"; right after prompt_end a new prompt is accepted.
func TestServe_PromptWhileRunningIsSessionBusy(t *testing.T) {
	b := newFake(rpcfake.RetryChain(rpcfake.Chain{Errors: []string{"503 Service Unavailable"}, BaseDelay: time.Hour}))
	h := serve(t, &rpcserver.Server{Backend: b})
	h.send(`{"id":"p1","type":"prompt","message":"one"}`)
	h.response()
	h.eventsUntil(agent.EventAutoRetryStart)
	h.send(`{"id":"p2","type":"prompt","message":"two"}`)
	if r := h.response(); r.Success || r.ID != "p2" || !strings.HasPrefix(r.Error, "session busy") {
		t.Errorf("second prompt = %+v, want a session busy error", r)
	}
	// pi 1.6: abort is answered once the session is idle, after the
	// prompt's prompt_end and agent_settled, so `await abort(); await
	// prompt()` starts the next prompt.
	h.send(`{"type":"abort"}`)
	evs := h.eventsUntil(rpc.EventAgentSettled)
	if end := evs[len(evs)-2]; end.Type != agent.EventPromptEnd || end.Status != agent.StatusAborted || !evs[len(evs)-1].Aborted {
		t.Errorf("events before the abort response end with %+v, %+v; want prompt_end aborted, agent_settled aborted", end, evs[len(evs)-1])
	}
	if r := h.response(); !r.Success || r.Command != "abort" {
		t.Errorf("abort = %+v, want success", r)
	}
	h.send(`{"id":"p3","type":"prompt","message":"three"}`)
	if r := h.response(); !r.Success || r.ID != "p3" || decode[rpc.PromptData](t, r).Disposition != "started" {
		t.Errorf("prompt right after abort = %+v, want started", r)
	}
	if calls := b.Calls(); strings.Join(calls, ",") != "prompt:one,abort,prompt:three" {
		t.Errorf("backend calls = %v (the busy prompt must not reach the backend)", calls)
	}
}

// SPEC 5/8: abort_retry and abort without a running prompt are harmless
// no-ops (plain success); set_auto_retry and set_auto_compaction answer
// plain success and change the state get_state reports.
func TestServe_ControlsAnswerPlainSuccess(t *testing.T) {
	b := newFake(nil)
	h := serve(t, &rpcserver.Server{Backend: b})
	for _, line := range []string{
		`{"id":"1","type":"abort_retry"}`,
		`{"id":"2","type":"abort"}`,
		`{"id":"3","type":"set_auto_retry","enabled":false}`,
		`{"id":"4","type":"set_auto_compaction","enabled":false}`,
	} {
		h.send(line)
		if r := h.response(); !r.Success || r.Data != nil || r.Error != "" {
			t.Errorf("%s → %+v, want plain success", line, r)
		}
	}
	h.send(`{"id":"5","type":"get_state"}`)
	st := decode[rpc.SessionState](t, h.response())
	if st.AutoRetryEnabled || st.AutoCompactionEnabled || st.SessionID != "s1" || st.Status != rpc.StatusIdle {
		t.Errorf("state = %+v, want both automatics off, idle session s1", st)
	}
}

// SPEC 8 [fix]: get_state during a backoff reports isRetrying and
// retryAttempt along with the other fields the issue lists.
func TestServe_GetStateDuringBackoff(t *testing.T) {
	b := newFake(rpcfake.RetryChain(rpcfake.Chain{Errors: []string{"503 Service Unavailable"}, BaseDelay: time.Hour}))
	h := serve(t, &rpcserver.Server{Backend: b})
	h.send(`{"id":"p","type":"prompt","message":"hello"}`)
	h.response()
	h.eventsUntil(agent.EventAutoRetryStart)
	h.send(`{"id":"s","type":"get_state"}`)
	r := h.response()
	st := decode[rpc.SessionState](t, r)
	if !st.IsRetrying || st.RetryAttempt != 1 || !st.AutoRetryEnabled || st.IsStreaming || st.Status != agent.StatusRunning ||
		st.Model == nil || st.Model.ID != "scripted-1" || st.Model.Provider != "scripted" || st.MessageCount != 2 {
		t.Errorf("state = %+v", st)
	}
	for _, key := range []string{"autoRetryEnabled", "isRetrying", "retryAttempt", "isStreaming", "isCompacting", "autoCompactionEnabled", "sessionId", "messageCount", "model",
		"thinkingLevel", "steeringMode", "followUpMode", "pendingMessageCount"} {
		if !strings.Contains(string(r.Data), `"`+key+`"`) {
			t.Errorf("get_state data lacks %q: %s", key, r.Data)
		}
	}
}

// get_messages returns the session's messages; get_last_assistant_text
// the last successful answer, or null.
func TestServe_MessagesAndLastAssistantText(t *testing.T) {
	b := newFake(rpcfake.RetryChain(rpcfake.Chain{Errors: []string{"503 Service Unavailable"}, BaseDelay: time.Millisecond, Reply: "the answer"}))
	h := serve(t, &rpcserver.Server{Backend: b})
	h.send(`{"id":"t0","type":"get_last_assistant_text"}`)
	if r := h.response(); string(r.Data) != `{"text":null}` {
		t.Errorf("before any answer: data = %s, want {\"text\":null}", r.Data)
	}
	h.send(`{"id":"p","type":"prompt","message":"question"}`)
	h.response()
	// pi 1.6's waitForIdle: agent_settled right after prompt_end.
	if evs := h.eventsUntil(agent.EventPromptEnd); len(evs) == 0 {
		t.Fatal("no events")
	}
	if e := h.event(); e.Type != rpc.EventAgentSettled || e.Aborted {
		t.Errorf("after prompt_end: %+v, want agent_settled not aborted", e)
	}
	h.send(`{"id":"m","type":"get_messages"}`)
	msgs := decode[rpc.MessagesData](t, h.response()).Messages
	if len(msgs) != 3 || msgs[0].Text() != "question" || msgs[1].StopReason != agent.StopReasonError || msgs[2].Text() != "the answer" {
		t.Errorf("messages = %+v", msgs)
	}
	h.send(`{"id":"t1","type":"get_last_assistant_text"}`)
	if d := decode[rpc.LastAssistantTextData](t, h.response()); d.Text == nil || *d.Text != "the answer" {
		t.Errorf("last assistant text = %v", d.Text)
	}
}

// A backend call that hangs is cut by the command timeout: an error
// response, and the loop goes on.
func TestServe_CommandTimeout(t *testing.T) {
	b := newFake(nil)
	blocked := true
	b.StateHook = func(ctx context.Context) error {
		if blocked {
			blocked = false
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	h := serve(t, &rpcserver.Server{Backend: b, CommandTimeout: 20 * time.Millisecond})
	h.send(`{"id":"1","type":"get_state"}`)
	h.send(`{"id":"2","type":"get_state"}`)
	if r := h.response(); r.Success || r.ID != "1" || !strings.Contains(r.Error, "deadline exceeded") {
		t.Errorf("hung command = %+v, want a deadline error", r)
	}
	if r := h.response(); !r.Success || r.ID != "2" {
		t.Errorf("next command = %+v", r)
	}
}

// brokenFollow fails following after the first event.
type brokenFollow struct{ *rpcfake.Backend }

func (b brokenFollow) Follow(ctx context.Context, runID string, after int64, fn func(agent.Event)) (agent.Event, error) {
	fn(agent.Event{Type: agent.EventAgentStart, Seq: after + 1})
	return agent.Event{}, errors.New("query events: connection refused")
}

// Issue 6: "a later failure is an error response with the same id": a
// stream that breaks ends with an error response for the prompt, and the
// session is free again.
func TestServe_BrokenEventStreamIsErrorResponseWithPromptID(t *testing.T) {
	b := brokenFollow{newFake(nil)}
	h := serve(t, &rpcserver.Server{Backend: b})
	h.send(`{"id":"p","type":"prompt","message":"hello"}`)
	h.response()
	if e := h.event(); e.Type != agent.EventAgentStart {
		t.Errorf("event = %+v", e)
	}
	r := h.response()
	if r.Success || r.ID != "p" || r.Command != "prompt" || !strings.Contains(r.Error, "connection refused") || !strings.Contains(r.Error, "after seq 1") {
		t.Errorf("response = %+v, want the follow error for prompt p", r)
	}
}

// terminatedFollow: Temporal closed the prompt's workflow (terminate)
// after its first event.
type terminatedFollow struct{ *rpcfake.Backend }

func (b terminatedFollow) Follow(ctx context.Context, runID string, after int64, fn func(agent.Event)) (agent.Event, error) {
	fn(agent.Event{Type: agent.EventAgentStart, Seq: after + 1})
	return agent.Event{}, &client.PromptClosedError{SessionID: "s1", WorkflowID: "session-s1", RunID: runID,
		Status: enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED}
}

// Issue 15 item 5, spec 13.11.4: a prompt terminated in Temporal ends the RPC prompt with
// an error response naming the terminate (not "may still be running").
func TestServe_TerminatedPromptIsErrorResponseNamingIt(t *testing.T) {
	b := terminatedFollow{newFake(nil)}
	h := serve(t, &rpcserver.Server{Backend: b})
	h.send(`{"id":"p","type":"prompt","message":"hello"}`)
	h.response()
	if e := h.event(); e.Type != agent.EventAgentStart {
		t.Errorf("event = %+v", e)
	}
	r := h.response()
	if r.Success || r.ID != "p" || !strings.Contains(r.Error, "was terminated") || strings.Contains(r.Error, "may still be running") {
		t.Errorf("response = %+v, want an error for prompt p naming the terminate", r)
	}
}

// compact answers with the backend's result, or its error; while a
// prompt runs it is refused as busy.
func TestServe_Compact(t *testing.T) {
	cases := []struct {
		name    string
		fn      func(context.Context, string, func(agent.Event)) (workflows.CompactResult, error)
		success bool
		want    string
		end     string // pi 1.6's compaction_end before the response
	}{
		{"nothing to compact", nil, false, rpc.NothingToCompactError,
			`{"type":"compaction_end","reason":"manual","aborted":false,"willRetry":false,"errorMessage":"Nothing to compact (session too small)"}`},
		{"result", func(_ context.Context, instr string, _ func(agent.Event)) (workflows.CompactResult, error) {
			return workflows.CompactResult{Result: &agent.CompactionResult{Summary: "sum:" + instr, TokensBefore: 1200}}, nil
		}, true, `{"summary":"sum:keep the plan","firstKeptEntryId":"","tokensBefore":1200}`,
			`{"type":"compaction_end","reason":"manual","result":{"summary":"sum:keep the plan","firstKeptEntryId":"","tokensBefore":1200},"aborted":false,"willRetry":false}`},
		{"failure", func(context.Context, string, func(agent.Event)) (workflows.CompactResult, error) {
			return workflows.CompactResult{}, errors.New("compaction of session s1 failed: summary call: 503 Service Unavailable")
		}, false, "summary call: 503",
			`{"type":"compaction_end","reason":"manual","aborted":false,"willRetry":false,"errorMessage":"compaction of session s1 failed: summary call: 503 Service Unavailable"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newFake(nil)
			b.CompactFunc = c.fn
			h := serve(t, &rpcserver.Server{Backend: b})
			h.send(`{"id":"c","type":"compact","customInstructions":"keep the plan"}`)
			if l := h.nextRaw(); l != `{"type":"compaction_start","reason":"manual"}` {
				t.Errorf("first line = %s", l)
			}
			if l := h.nextRaw(); l != c.end {
				t.Errorf("second line = %s\nwant %s", l, c.end)
			}
			r := h.response()
			text := r.Error
			if r.Success {
				text = string(r.Data)
			}
			if r.Success != c.success || r.ID != "c" || !strings.Contains(text, c.want) {
				t.Errorf("compact = %+v, want success=%t with %q", r, c.success, c.want)
			}
		})
	}
	// SPEC 9 (note: whoever waits for a manual compaction shows its
	// summary call's retries): the events come before compact's response,
	// and abort_retry reaches the compaction.
	t.Run("summary retries are events; abort_retry reaches them", func(t *testing.T) {
		b := newFake(nil)
		b.CompactFunc = rpcfake.SummaryRetryUntilAborted(b, "503 Service Unavailable", 60000)
		h := serve(t, &rpcserver.Server{Backend: b})
		h.send(`{"id":"c","type":"compact"}`)
		h.event() // compaction_start
		if e := h.event(); e.Type != "summarization_retry_scheduled" || e.Attempt != 1 || e.DelayMs != 60000 {
			t.Fatalf("line after compaction_start = %+v, want summarization_retry_scheduled", e)
		}
		h.send(`{"id":"r","type":"abort_retry"}`)
		// abort_retry's response is independent of the rest; the
		// compaction's auto_retry_end comes before its response.
		var got []string
		answered := false
		for !answered || len(got) < 3 {
			l := h.next()
			switch {
			case l.Response != nil && l.Response.ID == "r":
				if !l.Response.Success {
					t.Errorf("abort_retry during the compaction's backoff = %+v", *l.Response)
				}
				answered = true
			case l.Response != nil:
				if r := *l.Response; r.Success || r.ID != "c" || !strings.Contains(r.Error, "Retry cancelled") {
					t.Errorf("compact response = %+v, want its failure", r)
				}
				got = append(got, "compact")
			case l.Event != nil:
				if e := *l.Event; e.Type == "summarization_retry_finished" && (e.Success || e.FinalError != retry.CancelledMessage) ||
					e.Type == "compaction_end" && !e.Aborted {
					t.Errorf("event = %+v, want summarization_retry_finished Retry cancelled, then compaction_end aborted", e)
				}
				got = append(got, l.Event.Type)
			}
		}
		if strings.Join(got, " ") != "summarization_retry_finished compaction_end compact" {
			t.Errorf("lines after abort_retry: %v, want summarization_retry_finished, compaction_end, the compact response", got)
		}
	})
	t.Run("while a prompt runs", func(t *testing.T) {
		b := newFake(rpcfake.RetryChain(rpcfake.Chain{Errors: []string{"503 Service Unavailable"}, BaseDelay: time.Hour}))
		h := serve(t, &rpcserver.Server{Backend: b})
		h.send(`{"id":"p","type":"prompt","message":"hi"}`)
		h.response()
		h.eventsUntil(agent.EventAutoRetryStart)
		h.send(`{"id":"c","type":"compact"}`)
		if r := h.response(); r.Success || !strings.HasPrefix(r.Error, "session busy") {
			t.Errorf("compact during a prompt = %+v, want session busy", r)
		}
	})
}
