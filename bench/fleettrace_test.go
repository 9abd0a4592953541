package main

import (
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/durableagent/durableagent/activities"
)

// The fleet trace splits a one-call prompt's history into its phases
// (start, first workflow task, model call scheduled, started, completed,
// end), and leaves out a prompt that called the model twice.
func TestFleetTrace_PhasesOfAHistory(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	ev := func(sec float64, typ enumspb.EventType) *historypb.HistoryEvent {
		e := &historypb.HistoryEvent{EventType: typ, EventTime: timestamppb.New(t0.Add(time.Duration(sec * float64(time.Second))))}
		if typ == enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED {
			e.Attributes = &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{
				ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
					ActivityType: &commonpb.ActivityType{Name: activities.CallModelName}}}
		}
		return e
	}
	evs := []*historypb.HistoryEvent{
		ev(0, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED),
		ev(40, enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED),
		ev(41, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
		ev(41.5, enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED),
		ev(46.5, enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED),
		ev(47, enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED),
		ev(50, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED),
	}
	got := phasesOf(evs)
	want := []time.Duration{40 * time.Second, time.Second, 500 * time.Millisecond, 5 * time.Second, 3500 * time.Millisecond}
	if len(got) != len(want) {
		t.Fatalf("phases = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("phase %s = %v, want %v", phaseNames[i], got[i], want[i])
		}
	}
	twice := append(evs[:5:5], ev(47, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED), ev(50, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED))
	if p := phasesOf(twice); p != nil {
		t.Fatalf("a prompt with two model calls has phases %v, want none", p)
	}
}
