package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durableagent/durableagent/workflows"
)

func TestZZProbe(t *testing.T) {
	ctx := context.Background()
	cfg := QuickConfig()
	h, err := newHarness(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	s := h.scenario("probe")
	w, err := startChild(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	defer w.stop()
	for i, k := range []int{300, 100} {
		if i == 1 {
			time.Sleep(5 * time.Second)
		}
		run, err := h.startBare(ctx, s, fmt.Sprintf("probe-%d", i), workflows.BareInput{Payload: "x", Activities: k})
		if err != nil {
			t.Fatal(err)
		}
		if err := bareDone(ctx, run); err != nil {
			t.Fatal(err)
		}
		evs, _ := h.runHistory(ctx, run.GetID(), run.GetRunID(), 0)
		var last time.Time
		n := 0
		var line string
		var t0 time.Time
		for _, ev := range evs {
			if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED {
				t0 = ev.GetEventTime().AsTime()
			}
			if ev.GetEventType() != enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED {
				continue
			}
			at := ev.GetEventTime().AsTime()
			if !last.IsZero() && (n < 40 || n%25 == 0) {
				line += fmt.Sprintf("%.0f@%.2fs ", ms(at.Sub(last)), at.Sub(t0).Seconds())
			}
			last = at
			n++
		}
		t.Logf("run %d (%d activities): gaps between scheduled activities: %s", i, k, line)
		for _, ev := range evs[:40] {
			t.Logf("  %s %s", ev.GetEventTime().AsTime().Format("15:04:05.000"), ev.GetEventType())
		}
	}
}
