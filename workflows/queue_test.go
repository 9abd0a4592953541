package workflows

import (
	"testing"

	"go.temporal.io/sdk/testsuite"

	"github.com/durableagent/durableagent/agent"
)

// 15.1.7: an edit_queue sent right after its message's signal, in the
// same workflow task, finds the message (the handler takes the waiting
// signals in first), and the edited text is what is delivered.
func TestQueue_EditRightAfterTheSignal(t *testing.T) {
	h := newHarness(t)
	var out updateOutcome
	var res agent.EditQueueResult
	h.duringFirstTool(func() {
		h.signalMessage(agent.SignalFollowUp, "a")
		h.env.UpdateWorkflow(agent.UpdateEditQueue, "u1", &testsuite.TestUpdateCallback{
			OnAccept:   func() { out.accepted = true },
			OnReject:   func(err error) { out.rejected = err },
			OnComplete: func(r any, err error) { out.failed = err; res, _ = r.(agent.EditQueueResult) },
		}, agent.EditQueuePayload{Action: agent.QueueEdit, ID: "m1", Text: "a edited"})
	})
	got, err := h.run(h.toolInput(`tool:bash {"command":"true"}`, `text:first`, `text:second`))
	if err != nil || got.Text != "second" {
		t.Fatalf("result %+v %v", got, err)
	}
	if !out.accepted || out.rejected != nil || out.failed != nil || len(res.Queue) != 1 || res.Queue[0].Text != "a edited" {
		t.Fatalf("edit_queue: %+v %+v", out, res)
	}
}
