package integration

import (
	"context"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
)

// Issue 10 (long jobs) end to end: a prompt that continues as new several
// times is followed by workflow id, as `starter prompt`, `events --follow`,
// RPC mode and the TUI follow it (control.Follow): one stream, seq 1..N
// with no gap and no repeat, every tool call's start and end, and the
// answer at the end. A second follower that attaches late, after the
// first continue-as-new, gets the same stream from where it asks.
func TestIntegration_FollowersSeeOneStreamAcrossContinueAsNew(t *testing.T) {
	e := newEnv(t)
	e.startWorker()
	const calls = 12
	in := client.PromptInput(e.s, "long", "list the workspace again and again")
	in.Workspace = t.TempDir()
	in.Agent.ContinueAsNewEvents = 40
	for i := 0; i < calls; i++ {
		in.Model.Faults = append(in.Model.Faults, `tool:ls {}`)
	}
	in.Model.Faults = append(in.Model.Faults, "text:listed twelve times")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run, err := e.k.StartPrompt(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	firstRun := run.GetRunID()

	type stream struct {
		evs []agent.Event
		end agent.Event
		err error
	}
	follow := func(after int64) *stream {
		s := &stream{}
		s.end, s.err = e.k.Follow(ctx, "long", "", after, func(ev agent.Event) {
			if ev.Type != agent.EventMessageUpdate && ev.Type != agent.EventToolExecutionUpdate {
				s.evs = append(s.evs, ev)
			}
		})
		return s
	}
	done := make(chan *stream)
	go func() { done <- follow(0) }()
	// A late follower: attaches once the prompt has continued as new, and
	// asks for the events after seq 5 (in the first run).
	for {
		d, err := e.c.DescribeWorkflowExecution(ctx, "session-long", "")
		if err != nil {
			t.Fatal(err)
		}
		if d.GetWorkflowExecutionInfo().GetExecution().GetRunId() != firstRun {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	late := follow(5)
	first := <-done

	for name, s := range map[string]*stream{"first": first, "late": late} {
		if s.err != nil || s.end.Type != agent.EventPromptEnd || s.end.Status != agent.StatusCompleted {
			t.Fatalf("%s follower ended with %+v, %v", name, s.end, s.err)
		}
	}
	check := func(name string, s *stream, from int64) {
		var ends int
		for i, ev := range s.evs {
			if want := from + int64(i) + 1; ev.Seq != want {
				t.Fatalf("%s follower: event %d (%s) has seq %d, want %d: a gap or a repeat", name, i, ev.Type, ev.Seq, want)
			}
			if ev.Type == agent.EventToolExecutionEnd {
				ends++
			}
		}
		last := s.evs[len(s.evs)-1]
		if last.Type != agent.EventPromptEnd || last.Seq != s.end.Seq {
			t.Fatalf("%s follower: last event %+v, prompt_end %+v", name, last, s.end)
		}
		if from == 0 && ends != calls {
			t.Fatalf("%s follower saw %d tool_execution_end, want %d", name, ends, calls)
		}
	}
	check("first", first, 0)
	check("late", late, 5)
	if late.evs[len(late.evs)-1].Seq != first.evs[len(first.evs)-1].Seq {
		t.Fatalf("followers disagree on the last seq")
	}
	var answer string
	for _, ev := range first.evs {
		if ev.Type == agent.EventMessageEnd && ev.Message != nil && ev.Message.Role == agent.RoleAssistant {
			answer = ev.Message.Text()
		}
	}
	if answer != "listed twelve times" {
		t.Fatalf("last answer %q", answer)
	}
	// The prompt really ran in several runs.
	runs := 1
	for id := firstRun; ; runs++ {
		iter := e.c.GetWorkflowHistory(ctx, "session-long", id, false, enumspb.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		a := ev.GetWorkflowExecutionContinuedAsNewEventAttributes()
		if a == nil {
			break
		}
		id = a.GetNewExecutionRunId()
	}
	if runs < 3 {
		t.Fatalf("the prompt ran in %d run(s); want several (continue-as-new)", runs)
	}
	t.Logf("%d events over %d runs", len(first.evs), runs)
}
