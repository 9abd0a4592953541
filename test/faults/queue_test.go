package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/testserver"
)

// Issue 40 (docs/spec.md 15.1.7): the queue is workflow state. Follow-ups
// queued (one with an image) and edited while a tool runs are listed the
// same, ids and all, by the worker that replaces a SIGKILLed one and by
// the run the prompt continues as new into, and reach the model as
// edited, in order.
func TestFaults_QueueSurvivesWorkerSIGKILLAndContinueAsNew(t *testing.T) {
	skipShort(t)
	e := newEnv(t, sharedAddress(t))
	w := e.spawnWorker(0)
	in := client.PromptInput(e.s, "killq", "look around")
	in.Workspace = t.TempDir()
	in.Agent.ContinueAsNewEvents = 30
	for i := 0; i < 4; i++ {
		in.Model.Faults = append(in.Model.Faults, `tool:bash {"command":"sleep 1"}`)
	}
	in.Model.Faults = append(in.Model.Faults, "text:done", "text:after one", "text:after two")
	ctx := context.Background()
	run, err := e.k.StartPrompt(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	e.waitFor("killq", 30*time.Second, func(ev agent.Event) bool { return ev.Type == agent.EventToolExecutionStart })
	img := agent.ContentBlock{Type: agent.BlockImage, Data: "iVBORw0KGgo=", MimeType: "image/png"}
	if err := e.k.FollowUp(ctx, "killq", "one"); err != nil {
		t.Fatal(err)
	}
	if err := e.k.FollowUp(ctx, "killq", "two", img); err != nil {
		t.Fatal(err)
	}
	if _, err := e.k.EditQueue(ctx, "killq", agent.EditQueuePayload{Action: agent.QueueEdit, ID: "m1", Text: "one edited"}); err != nil {
		t.Fatal(err)
	}
	const want = "m1 follow_up one edited 0|m2 follow_up two 1"
	queue := func() string {
		qctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		q, err := e.k.Queue(qctx, "killq")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range q {
			out = append(out, fmt.Sprintf("%s %s %s %d", m.ID, m.Kind, m.Text, len(m.Images)))
		}
		return strings.Join(out, "|")
	}
	w.kill()
	e.spawnWorker(0)
	if got := queue(); got != want {
		t.Fatalf("queue after the SIGKILL: %q, want %q", got, want)
	}
	testserver.WaitFor(t, time.Minute, "the prompt continuing as new", func() bool {
		d, err := e.c.DescribeWorkflowExecution(ctx, run.GetID(), "")
		return err == nil && d.GetWorkflowExecutionInfo().GetExecution().GetRunId() != run.GetRunID()
	})
	if got := queue(); got != want {
		t.Fatalf("queue after continue-as-new: %q, want %q", got, want)
	}
	res, err := e.result(run, 2*time.Minute)
	if err != nil || res.Text != "after two" {
		t.Fatalf("result %+v %v", res, err)
	}
	var users []string
	for _, en := range readSession(t, e.s.DataDir, "killq").entries {
		if m := en.Message; m != nil && m.Role == agent.RoleUser {
			users = append(users, fmt.Sprintf("%s %d", m.Text(), len(m.Images())))
		}
	}
	if got := strings.Join(users, "|"); got != "look around 0|one edited 0|two 1" {
		t.Fatalf("delivered user messages %q, want the follow-ups as edited, in order", got)
	}
}
