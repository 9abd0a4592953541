package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
)

// waitStreaming waits until the session's prompt is inside its model call.
func (e *env) waitStreaming(id string) {
	e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := e.k.State(context.Background(), id)
		if err == nil && st.IsStreaming {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("session %s never started its model call: %v", id, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// firstAnswer returns the first assistant message_end of the session's
// events and the session file's entry under the same id.
func (e *env) firstAnswer(id string) (agent.Event, session.Entry) {
	e.t.Helper()
	var end *agent.Event
	for _, ev := range e.events(id) {
		if ev.Type == agent.EventMessageEnd && ev.Message != nil && ev.Message.Role == agent.RoleAssistant {
			end = &ev
			break
		}
	}
	if end == nil {
		e.t.Fatalf("session %s: no assistant message_end", id)
	}
	store, err := session.Open(e.dataDir + "/sessions")
	if err != nil {
		e.t.Fatal(err)
	}
	sess, err := store.Load(id)
	if err != nil {
		e.t.Fatal(err)
	}
	entry, ok := sess.Get(end.EntryID)
	if !ok || entry.Message == nil {
		e.t.Fatalf("session %s: message_end %s has no entry in the file", id, end.EntryID)
	}
	return *end, entry
}

// Issue 15 item 4 on the real server: a worker stopped gracefully (SIGTERM,
// Ctrl-C, a deploy) in the middle of a model call writes nothing into the
// session. The workflow records the lost call as a connection error, the
// session file says the same under that entry id (not "aborted"), and the
// prompt completes on the next worker. An abort the user asks for, by
// contrast, is "aborted" in the events and in the file.
func TestIntegration_ModelCallStoppedByWorkerShutdownIsAConnectionErrorInEventsAndFile(t *testing.T) {
	e := newEnv(t)
	e.startWorker()

	run := e.prompt("stopped", "hang")
	e.waitStreaming("stopped")
	e.stopWorker()
	e.startWorker()
	res, err := e.result(run)
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("result %+v %v", res, err)
	}
	end, entry := e.firstAnswer("stopped")
	if end.Message.StopReason != agent.StopReasonError || !strings.HasPrefix(end.Message.ErrorMessage, "connection error") {
		t.Fatalf("the interrupted call's message_end says %q %q, want a connection error", end.Message.StopReason, end.Message.ErrorMessage)
	}
	if entry.Message.StopReason != end.Message.StopReason || entry.Message.ErrorMessage != end.Message.ErrorMessage {
		t.Fatalf("entry %s: the session file says %q %q, the events say %q %q",
			end.EntryID, entry.Message.StopReason, entry.Message.ErrorMessage, end.Message.StopReason, end.Message.ErrorMessage)
	}

	run = e.prompt("aborted", "hang")
	e.waitStreaming("aborted")
	if err := e.k.Abort(context.Background(), "aborted"); err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); res.Status != agent.StatusAborted {
		t.Fatalf("aborted prompt: %+v %v", res, err)
	}
	end, entry = e.firstAnswer("aborted")
	if end.Message.StopReason != agent.StopReasonAborted || entry.Message.StopReason != agent.StopReasonAborted ||
		entry.Message.ErrorMessage != end.Message.ErrorMessage {
		t.Fatalf("aborted call: the events say %q %q, the file %q %q; want aborted in both",
			end.Message.StopReason, end.Message.ErrorMessage, entry.Message.StopReason, entry.Message.ErrorMessage)
	}
}
