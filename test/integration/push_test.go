package integration

import (
	"strings"
	"testing"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/live"
)

// streamingEnv is an env whose scripted model streams answer over ~3 s.
func streamingEnv(t *testing.T) (*env, string) {
	e := newEnv(t)
	answer := strings.TrimSpace(strings.Repeat("pushed word ", 80))
	e.s.Scripted.Reply = answer
	e.s.Scripted.StreamDelayMs = 20 // 160 words: ~3 s of streaming
	return e, answer
}

// followAll follows session with one Follow call and wants every event
// and the whole answer as live text; it returns the Describes made and
// the snapshots push streams brought meanwhile.
func followAll(t *testing.T, e *env, session, answer string) (describes, pushed int64) {
	t.Helper()
	before := client.PushedSnapshots()
	cc, types, texts := liveFollow(t, e, session, 1)
	if !strings.HasSuffix(types[0], agent.EventPromptEnd) {
		t.Fatalf("%s: follower got %s", session, types[0])
	}
	if texts[0] != answer {
		t.Fatalf("%s: live text %q, want the answer %q", session, texts[0], answer)
	}
	return cc.describes.Load(), client.PushedSnapshots() - before
}

// Spec 13.10.9: with stream.push on, a follower gets a streaming prompt's
// whole text from the worker's push hub (issue 26), and reads the heartbeats far
// less often than with it off (the server's heartbeat writes and the
// follower's Describes are what the push path takes off Temporal).
func TestIntegration_LivePushFollower(t *testing.T) {
	e, answer := streamingEnv(t)
	e.s.Stream.Push = "127.0.0.1:0"
	e.startWorker()
	e.prompt("push-on")
	onDescribes, onPushed := followAll(t, e, "push-on", answer)
	e.stopWorker()

	e.s.Stream.Push = "off"
	e.startWorker()
	e.prompt("push-off")
	offDescribes, offPushed := followAll(t, e, "push-off", answer)
	t.Logf("push on: %d Describes, %d snapshots pushed; off: %d Describes, %d pushed", onDescribes, onPushed, offDescribes, offPushed)
	if onPushed < 10 || offPushed != 0 {
		t.Fatalf("snapshots pushed: %d with push on (want the stream), %d with it off (want none)", onPushed, offPushed)
	}
	if onDescribes*2 > offDescribes {
		t.Fatalf("%d Describes with push on, %d with it off: want less than half", onDescribes, offDescribes)
	}
}

// Spec 13.10.9: a follower that cannot reach the worker's push address
// (connection refused) still gets the whole text, from the heartbeats (the
// fallback), and the message_end.
func TestIntegration_LivePushRefusedFallsBack(t *testing.T) {
	e, answer := streamingEnv(t)
	hub, err := live.ListenHub("127.0.0.1:0", live.HubOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hub.Close() // its address refuses connections; calls still publish to it
	e.ext.Activities = func(a *activities.Activities) { a.Push = hub }
	e.startWorker()
	e.prompt("push-refused")
	_, pushed := followAll(t, e, "push-refused", answer)
	if pushed != 0 {
		t.Fatalf("%d snapshots pushed from a closed hub", pushed)
	}
}
