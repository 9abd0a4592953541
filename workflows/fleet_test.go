package workflows

import (
	"context"
	"strings"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/activities"
)

// Spec 18.2: a worker that limits model calls (BeginPrompt says
// ModelQueues) gets them on the provider's model queue; one that does not
// gets them on the prompt's queue, as before.
func TestFleet_ModelCallQueue(t *testing.T) {
	for _, limited := range []bool{true, false} {
		h := newHarness(t)
		h.acts.ModelQueues = limited
		var queue string
		h.callModel = func(ctx context.Context, n int, in activities.CallModelInput) (activities.CallModelResult, error) {
			queue = activity.GetInfo(ctx).TaskQueue
			return h.acts.CallModel(ctx, in)
		}
		if _, err := h.run(input()); err != nil {
			t.Fatal(err)
		}
		// The test environment's workflows run on its default queue.
		want := "default-test-taskqueue"
		if limited {
			want = activities.ModelQueue(want, "scripted")
		}
		if queue != want {
			t.Fatalf("limited=%v: model call on %q, want %q", limited, queue, want)
		}
	}
}

// Spec 18.3: the priority of a prompt's model calls follows its origin,
// with the session (cut to the server's 64 bytes) as fairness key; a
// prompt of no origin (every history from before origins) has none. The
// test environment does not pass priorities to activities: the order
// they make is tested on the server (TestIntegration_FleetInteractiveBeforeScheduled).
func TestFleet_PriorityOfOrigin(t *testing.T) {
	long := strings.Repeat("s", 80)
	cases := []struct {
		name, origin, session string
		want                  temporal.Priority
	}{
		{"interactive", OriginInteractive, "s1", temporal.Priority{PriorityKey: PriorityInteractive, FairnessKey: "s1"}},
		{"delegated", OriginDelegated, "s1", temporal.Priority{PriorityKey: PriorityDelegated, FairnessKey: "s1"}},
		{"scheduled, long session", OriginScheduled, long, temporal.Priority{PriorityKey: PriorityScheduled, FairnessKey: long[:64]}},
		{"no origin", "", "s1", temporal.Priority{}},
		{"unknown origin", "cron", "s1", temporal.Priority{}},
	}
	for _, tc := range cases {
		if got := priorityOf(PromptInput{Origin: tc.origin, SessionID: tc.session}); got != tc.want {
			t.Errorf("%s: priority %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// Spec 18.2: the routing is carried into the next run of a prompt that
// continues as new (which does not call BeginPrompt again).
func TestFleet_ModelQueuesCarriedAcrossContinueAsNew(t *testing.T) {
	h := newHarness(t)
	h.acts.ModelQueues = true
	in := h.toolInput(`tool:read {"path":"a.txt"}`, `text:done`)
	in.Agent.ContinueAsNewEvents = 20
	h.env.SetCurrentHistoryLength(25)
	if next := h.continued(in); next.Continued == nil || !next.Continued.ModelQueues {
		t.Fatalf("continued input %+v, want ModelQueues carried", next.Continued)
	}
}
