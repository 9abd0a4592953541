package faults

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/llm/openai"
	"github.com/durableagent/durableagent/retry"
	"github.com/durableagent/durableagent/workflows"
)

// startWorkerWith runs an in-process worker whose activities use the
// given providers (by name) and the product's for every other name.
func (e *env) startWorkerWith(providers map[string]llm.Provider) {
	e.t.Helper()
	w, err := app.NewWorker(e.c, e.s, app.Extensions{Activities: func(acts *activities.Activities) {
		product := acts.Provider
		acts.NeedsCredential = nil // the test's providers talk to local servers, keyless
		acts.Provider = func(name string) (llm.Provider, error) {
			if p, ok := providers[name]; ok {
				return p, nil
			}
			return product(name)
		}
	}})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(w.Stop)
}

// A model that sends nothing for longer than the heartbeat timeout is a
// slow model, not a dead worker (DESIGN: the activity heartbeats on a
// ticker, not per token): the call completes, nothing is retried.
func TestFaults_ModelSilentLongerThanHeartbeatTimeoutIsNotADeadWorker(t *testing.T) {
	skipShort(t)
	e := newEnv(t, sharedAddress(t))
	e.s.Model.HeartbeatTimeoutMs = 1000
	e.startWorker()
	began := time.Now()
	run := e.prompt("silent", "hang:3s")
	res, err := e.result(run, time.Minute)
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	if took := time.Since(began); took < 3*time.Second {
		t.Fatalf("the prompt took %v; the model was silent for 3s", took)
	}
	checkEvents(t, e.events("silent"), expectedEvents([]string{""}, e.s.Retry.BaseDelayMs, 3))
	for _, c := range modelCalls(t, history(t, e.c, run.GetID(), run.GetRunID())) {
		if c.timedOut != "" {
			t.Fatalf("model call %s timed out (%s) while its worker was alive", c.entryID, c.timedOut)
		}
	}
}

// A model that never answers is bounded by model.timeoutMs: the call
// ends with the start-to-close timeout, becomes a retryable connection
// error (SPEC 7) and the retry gets the answer.
func TestFaults_ModelHangingForeverEndsAtTheModelTimeoutAndIsRetried(t *testing.T) {
	skipShort(t)
	e := newEnv(t, sharedAddress(t))
	e.s.Model.HeartbeatTimeoutMs = 1000
	e.s.Model.TimeoutMs = 3000
	e.s.Retry.BaseDelayMs = 200
	e.startWorker()
	run := e.prompt("hung", "hang")
	res, err := e.result(run, time.Minute)
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("prompt: %+v %v", res, err)
	}
	lost := fmt.Sprintf(workflows.ConnectionLostMessage, "start-to-close")
	evs := e.events("hung")
	checkEvents(t, evs, expectedEvents([]string{lost, ""}, 200, 3))
	tr := &trial{session: "hung", res: res, events: evs, file: readSession(t, e.s.DataDir, "hung")}
	checkSessionEntries(t, tr)
	// The session file's record of the hung call: the workflow's
	// connection error, or what the worker wrote when the call's context
	// ran out (the first write of an entry id wins).
	hung := tr.file.entries[1].Message
	t.Logf("session record of the hung call: stopReason %q, error %q", hung.StopReason, hung.ErrorMessage)
	if hung.StopReason != agent.StopReasonError || hung.ErrorMessage != lost {
		t.Errorf("the session file records the hung call as %q %q, but the prompt's events say %q: "+
			"the worker's own write for the timed-out call won over the workflow's", hung.StopReason, hung.ErrorMessage, lost)
	}
}

// Wire fragments of an OpenAI Chat Completions stream.
const (
	chunkHel  = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}` + "\n\n"
	chunkLo   = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}]}` + "\n\n"
	chunkDone = "data: [DONE]\n\n"
)

func sse(w http.ResponseWriter, chunks ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, c := range chunks {
		fmt.Fprint(w, c)
		w.(http.Flusher).Flush()
	}
}

// cut ends the connection under a started response: with an RST
// (linger 0) or a plain close, which leaves the chunked body unfinished.
func cut(w http.ResponseWriter, rst bool) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	if tc, ok := conn.(*net.TCPConn); ok && rst {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// A model that drops the connection mid-stream (the OpenAI-compatible
// provider against a local server that sends one chunk and then cuts):
// the call is a retryable error, the retry gets the whole answer, and the
// session keeps the cut call's entry off the run context.
func TestFaults_ModelDroppingTheConnectionMidStreamIsRetried(t *testing.T) {
	skipShort(t)
	cases := []struct {
		name string
		drop func(w http.ResponseWriter)
	}{
		{"TCP reset after the first chunk", func(w http.ResponseWriter) { sse(w, chunkHel); cut(w, true) }},
		{"connection closed inside the chunked body", func(w http.ResponseWriter) { sse(w, chunkHel); cut(w, false) }},
		{"stream ended without finish_reason or [DONE]", func(w http.ResponseWriter) { sse(w, chunkHel) }},
	}
	addr := sharedAddress(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) == 1 {
					tc.drop(w)
					return
				}
				sse(w, chunkHel, chunkLo, chunkDone)
			}))
			defer srv.Close()
			e := newEnv(t, addr)
			e.s.Retry.BaseDelayMs = 200
			e.s.Model.Provider, e.s.Model.Name = "openai", "gpt-test"
			e.startWorkerWith(map[string]llm.Provider{"openai": openai.New(srv.URL + "/v1")})
			id := fmt.Sprintf("drop-%d", i)
			res, err := e.result(e.prompt(id), time.Minute)
			if err != nil || res.Status != agent.StatusCompleted || res.Text != "Hello" {
				t.Fatalf("prompt: %+v %v", res, err)
			}
			all := e.events(id)
			evs := contractEvents(all)
			if len(evs) < 3 || evs[2].Type != agent.EventAgentEnd {
				t.Fatalf("events %s", typesOf(evs))
			}
			text := evs[2].ErrorMessage
			if c := retry.Classify(retry.Outcome{StopReason: "error", ErrorMessage: text}); c.Class != retry.ClassRetryable {
				t.Fatalf("the cut stream's error %q classifies as %q", text, c.Class)
			}
			t.Logf("cut stream reported as %q", text)
			checkEvents(t, all, expectedEvents([]string{text, ""}, 200, 3))
			checkSessionEntries(t, &trial{session: id, res: res, events: all, file: readSession(t, e.s.DataDir, id)})
			if n := calls.Load(); n != 2 {
				t.Fatalf("the model server saw %d requests, want 2", n)
			}
		})
	}
}
