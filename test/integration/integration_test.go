package integration

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/retry"
	"github.com/durableagent/durableagent/workflows"
)

const e503 = "503 Service Unavailable"

// fault-free-equivalent event order of a prompt with one retried error.
const oneRetryOrder = "agent_start,message_end,agent_end,auto_retry_start,agent_start,message_end,agent_end,auto_retry_end,prompt_end"

// SPEC 4/5 on a real server: the backoff waits on real durable timers
// (2x longer each attempt) and abort_retry sent through the client ends
// the chain with "Retry cancelled".
func TestIntegration_RetryChainWithDurableTimersAndAbortRetry(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	run := e.prompt("chain", e503, e503, e503)
	e.waitEvent("chain", 30*time.Second, func(ev agent.Event) bool {
		return ev.Type == agent.EventAutoRetryStart && ev.Attempt == 2
	})
	if err := e.k.AbortRetry(context.Background(), "chain"); err != nil {
		t.Fatal(err)
	}
	res, err := e.result(run)
	if err == nil || res.Status != agent.StatusFailed || !strings.HasPrefix(res.Error, retry.CancelledMessage) {
		t.Fatalf("result %+v, err %v; want failed with Retry cancelled", res, err)
	}
	evs := e.events("chain")
	var starts []agent.Event
	var end agent.Event
	for _, ev := range evs {
		switch ev.Type {
		case agent.EventAutoRetryStart:
			starts = append(starts, ev)
		case agent.EventAutoRetryEnd:
			end = ev
		}
	}
	if len(starts) != 2 || starts[0].DelayMs != 500 || starts[1].DelayMs != 1000 {
		t.Fatalf("auto_retry_start events %+v, want delays 500 then 1000", starts)
	}
	if end.Success || end.Attempt != 2 || end.FinalError != retry.CancelledMessage {
		t.Fatalf("auto_retry_end %+v", end)
	}
	// The first backoff really waited on the server's timer.
	for i, ev := range evs {
		if ev.Seq == starts[0].Seq {
			next := evs[i+1]
			if next.Type != agent.EventAgentStart || next.Time.Sub(ev.Time) < 500*time.Millisecond {
				t.Fatalf("after the first auto_retry_start came %s %v later", next.Type, next.Time.Sub(ev.Time))
			}
		}
	}
}

// The `temporal` CLI names work through the plain client API: signal
// abort_retry and query events (no argument) by name.
func TestIntegration_CLICompatibleSignalAndQueryNames(t *testing.T) {
	e := newEnv(t)
	e.s.Retry.BaseDelayMs = 60_000
	e.startWorker()
	run := e.prompt("names", e503)
	id := workflows.WorkflowID("names")
	deadline := time.Now().Add(30 * time.Second)
	var raw []map[string]any
	for time.Now().Before(deadline) {
		v, err := e.c.QueryWorkflow(context.Background(), id, "", "events")
		if err == nil {
			raw = nil
			if err := v.Get(&raw); err != nil {
				t.Fatal(err)
			}
			if len(raw) > 0 && raw[len(raw)-1]["type"] == "auto_retry_start" {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	last := raw[len(raw)-1]
	for _, k := range []string{"attempt", "maxAttempts", "delayMs", "errorMessage", "seq", "time"} {
		if _, ok := last[k]; !ok {
			t.Fatalf("auto_retry_start from the events query lacks %q: %v", k, last)
		}
	}
	if err := e.c.SignalWorkflow(context.Background(), id, "", "abort_retry", nil); err != nil {
		t.Fatal(err)
	}
	res, _ := e.result(run)
	if !strings.HasPrefix(res.Error, retry.CancelledMessage) {
		t.Fatalf("result %+v, want Retry cancelled (a 60 s timer was pending)", res)
	}
	v, err := e.c.QueryWorkflow(context.Background(), id, "", "state")
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := v.Get(&st); err != nil {
		t.Fatal(err)
	}
	if st["isRetrying"] != false || st["autoRetryEnabled"] != true {
		t.Fatalf("state by name: %v", st)
	}
}

// Durability: the worker stops during a backoff wait; a new worker picks
// the prompt up after the durable timer, and the events and the session
// file are those of a fault-free run.
func TestIntegration_WorkerRestartDuringBackoff(t *testing.T) {
	e := newEnv(t)
	e.s.Retry.BaseDelayMs = 3000
	e.startWorker()
	run := e.prompt("restart", e503)
	e.waitEvent("restart", 30*time.Second, isType(agent.EventAutoRetryStart))
	e.stopWorker()
	time.Sleep(time.Second)
	e.startWorker()
	res, err := e.result(run)
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("result %+v %v", res, err)
	}
	if got := typesOf(e.events("restart")); got != oneRetryOrder {
		t.Fatalf("events %s\nwant   %s", got, oneRetryOrder)
	}
	assertSessionEntries(t, e, "restart", 4) // system prompt record, user message, failed and retried answers
}

// Durability: the embedded server itself stops during the backoff wait and
// starts again on the same SQLite file; the pending timer fires and the
// prompt completes.
func TestIntegration_ServerRestartDuringBackoff(t *testing.T) {
	e := newEnv(t)
	e.s.Retry.BaseDelayMs = 4000
	e.startWorker()
	run := e.prompt("srv", e503)
	e.waitEvent("srv", 30*time.Second, isType(agent.EventAutoRetryStart))
	e.stopServer()
	e.startServer()
	e.startWorker()
	res, err := e.result(run)
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("result %+v %v", res, err)
	}
	if got := typesOf(e.events("srv")); got != oneRetryOrder {
		t.Fatalf("events %s\nwant   %s", got, oneRetryOrder)
	}
	assertSessionEntries(t, e, "srv", 4) // system prompt record, user message, failed and retried answers
}

// SPEC 7: a worker killed (SIGKILL) during the model call; the heartbeat
// timeout becomes auto_retry_start with a "connection error" and the
// prompt completes on another worker.
func TestIntegration_WorkerKilledDuringModelCall(t *testing.T) {
	e := newEnv(t)
	child := e.spawnWorker()
	run := e.prompt("killed", "hang")
	// Wait until the child worker is inside the model call.
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := e.k.State(context.Background(), "killed")
		if err == nil && st.IsStreaming {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the child worker never started the model call: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	e.startWorker()
	res, err := e.result(run)
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("result %+v %v", res, err)
	}
	start := e.waitEvent("killed", time.Second, isType(agent.EventAutoRetryStart))
	if !strings.Contains(start.ErrorMessage, "connection error") || !strings.Contains(start.ErrorMessage, "heartbeat") {
		t.Fatalf("auto_retry_start errorMessage %q, want a heartbeat connection error", start.ErrorMessage)
	}
	if got := typesOf(e.events("killed")); got != oneRetryOrder {
		t.Fatalf("events %s\nwant   %s", got, oneRetryOrder)
	}
}

// assertSessionEntries checks the session file holds exactly n entries
// with unique ids (no duplicate, nothing lost).
func assertSessionEntries(t *testing.T, e *env, id string, n int) {
	t.Helper()
	store, err := session.Open(e.dataDir + "/sessions")
	if err != nil {
		t.Fatal(err)
	}
	sess, err := store.Load(id)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, en := range sess.Entries {
		if seen[en.ID] {
			t.Fatalf("duplicate entry %s", en.ID)
		}
		seen[en.ID] = true
	}
	if len(sess.Entries) != n {
		b, _ := json.MarshalIndent(sess.Entries, "", " ")
		t.Fatalf("session has %d entries, want %d:\n%s", len(sess.Entries), n, b)
	}
}

var _ = os.Getenv
