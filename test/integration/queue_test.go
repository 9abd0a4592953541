package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
)

// Issue 40 (docs/spec.md 15.1.7) on a real worker: the queue lists each
// message with its id, kind, text, images and sent time in delivery
// order; edit_queue edits and removes; a removed message never reaches
// the model; an edit of a delivered message is refused; and edits
// racing a delivery end in exactly one winner: the delivered text is the
// last edit accepted, and every edit after it is refused.
func TestIntegration_QueueListEditRemoveAndRaceDelivery(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	in := client.PromptInput(e.s, "queue", "look around")
	in.Workspace = t.TempDir()
	in.Model.Faults = []string{`tool:bash {"command":"sleep 3"}`, `tool:bash {"command":"sleep 2"}`, `text:first`, `text:second`}
	ctx := context.Background()
	run, err := e.k.StartPrompt(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	bashStarts := func(n int) func(agent.Event) bool {
		seen := map[string]bool{} // the events query is polled: each poll sees them all again
		return func(ev agent.Event) bool {
			if ev.Type == agent.EventToolExecutionStart && ev.ToolName == "bash" {
				seen[fmt.Sprint(ev.Seq)] = true
			}
			return len(seen) == n
		}
	}
	e.waitEvent("queue", 30*time.Second, bashStarts(1))
	img := agent.ContentBlock{Type: agent.BlockImage, Data: "iVBORw0KGgo=", MimeType: "image/png"}
	for _, send := range []func() error{
		func() error { return e.k.FollowUp(ctx, "queue", "a") },
		func() error { return e.k.FollowUp(ctx, "queue", "b") },
		func() error { return e.k.Steer(ctx, "queue", "c", img) },
	} {
		if err := send(); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.k.Steer(ctx, "queue", "bad image", agent.ContentBlock{Type: agent.BlockImage, Data: "x", MimeType: "text/plain"}); err == nil || !strings.Contains(err.Error(), "mimeType") {
		t.Fatalf("steer with a text/plain image: %v", err)
	}
	q, err := e.k.Queue(ctx, "queue")
	if err != nil {
		t.Fatal(err)
	}
	if got := describe(q); got != "m3 steer c 1|m1 follow_up a 0|m2 follow_up b 0" || q[0].SentAt.IsZero() {
		t.Fatalf("queue %s (sentAt %v)", got, q[0].SentAt)
	}
	if _, err := e.k.EditQueue(ctx, "queue", agent.EditQueuePayload{Action: agent.QueueEdit, ID: "m1", Text: "a edited"}); err != nil {
		t.Fatal(err)
	}
	// starter queue lists; starter queue rm removes.
	if code, out, errOut := e.starter("queue", "--session", "queue"); code != 0 || !strings.Contains(out, "m3 steer") || !strings.Contains(out, "c [1 image(s)]") || !strings.Contains(out, "m1 follow_up") {
		t.Fatalf("starter queue: exit %d, %q %q", code, out, errOut)
	}
	if code, out, errOut := e.starter("queue", "rm", "--session", "queue", "m2"); code != 0 || !strings.Contains(out, "removed m2 follow_up: b") || strings.Count(out, "m2") != 1 {
		t.Fatalf("starter queue rm m2: exit %d, %q %q", code, out, errOut)
	}
	if code, _, errOut := e.starter("queue", "edit", "--session", "queue", "m2", "again"); code != 2 || !strings.Contains(errOut, "message m2 was already removed") {
		t.Fatalf("starter queue edit m2 after its removal: exit %d, %q", code, errOut)
	}
	for p, want := range map[agent.EditQueuePayload]string{
		{Action: "promote", ID: "m1"}:                     `action is "promote"`,
		{Action: agent.QueueEdit, ID: "m1"}:               "needs a non-empty text or a kind",
		{Action: agent.QueueRemove, ID: "m2"}:             "message m2 was already removed",
		{Action: agent.QueueRemove, ID: "m9"}:             `message "m9" is not queued`,
		{Action: agent.QueueEdit, ID: "m1", Kind: "push"}: `kind is "push"`,
	} {
		if _, err := e.k.EditQueue(ctx, "queue", p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("edit_queue %+v: %v, want %q", p, err, want)
		}
	}

	// The steer is delivered at the next model call; editing it then is
	// refused. A new steer is edited while the second call runs, until
	// its delivery wins.
	e.waitEvent("queue", 30*time.Second, bashStarts(2))
	if _, err := e.k.EditQueue(ctx, "queue", agent.EditQueuePayload{Action: agent.QueueEdit, ID: "m3", Text: "too late"}); err == nil || !strings.Contains(err.Error(), "message m3 was already delivered") {
		t.Fatalf("edit of a delivered message: %v", err)
	}
	if err := e.k.Steer(ctx, "queue", "d v0"); err != nil {
		t.Fatal(err)
	}
	accepted, refusal := "d v0", ""
	for i := 1; refusal == "" && i < 2000; i++ {
		text := fmt.Sprintf("d v%d", i)
		_, err := e.k.EditQueue(ctx, "queue", agent.EditQueuePayload{Action: agent.QueueEdit, ID: "m4", Text: text})
		if err != nil {
			refusal = err.Error()
			break
		}
		accepted = text
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.Contains(refusal, "message m4 was already delivered") || accepted == "d v0" {
		t.Fatalf("edits racing the delivery: last accepted %q, then %q; want edits accepted, then refused as delivered", accepted, refusal)
	}
	r, err := e.result(run)
	if err != nil || r.Text != "second" {
		t.Fatalf("result %+v %v", r, err)
	}
	var users []string
	for _, ev := range e.events("queue") {
		if ev.Type == agent.EventMessageEnd && ev.Message != nil && ev.Message.Role == agent.RoleUser {
			users = append(users, fmt.Sprintf("%s %d", ev.Message.Text(), len(ev.Message.Images())))
		}
	}
	if got, want := strings.Join(users, "|"), "look around 0|c 1|"+accepted+" 0|a edited 0"; got != want {
		t.Fatalf("delivered user messages %q, want %q (b removed, d as last edited)", got, want)
	}
}

// describe is "id kind text images|..." of a queue.
func describe(q []agent.QueuedMessage) string {
	var out []string
	for _, m := range q {
		out = append(out, fmt.Sprintf("%s %s %s %d", m.ID, m.Kind, m.Text, len(m.Images)))
	}
	return strings.Join(out, "|")
}
