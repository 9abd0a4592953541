package main

import (
	"context"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"

	"github.com/durableagent/durableagent/agent"
)

// OverheadResult compares one fault-free prompt with the bare workflow.
type OverheadResult struct {
	Prompt Dist `json:"prompt"`
	Bare   Dist `json:"bare"`
	// Ratio is Prompt.P50 / Bare.P50; RatioP95 the same at p95.
	Ratio    float64 `json:"ratio"`
	RatioP95 float64 `json:"ratioP95"`
	// Activities counts the activities of one prompt and of one bare run:
	// the main structural cost.
	PromptActivities int `json:"promptActivities"`
	BareActivities   int `json:"bareActivities"`
	// PromptParts and BareParts split a run's server-side time (medians
	// over the measured runs, ms): each activity type from scheduled to
	// completed, "workflow tasks" from scheduled to completed, summed per
	// run, and "workflow task count".
	PromptParts map[string]float64 `json:"promptParts"`
	BareParts   map[string]float64 `json:"bareParts"`
}

const overheadMessage = "fix the failing test"

// overhead times prompts and bare runs interleaved (the order alternates
// every round) so both see the same noise. Latency is end to end: from
// the start request to the result in the client.
func (h *harness) overhead(ctx context.Context) (*OverheadResult, error) {
	s := h.scenario("overhead")
	w, err := startChild(ctx, s)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	var prompt, bare []float64
	promptParts, bareParts := map[string][]float64{}, map[string][]float64{}
	res := &OverheadResult{}
	total := h.cfg.OverheadWarmup + h.cfg.OverheadRuns
	for i := 0; i < total; i++ {
		timePrompt := func() error {
			t0 := time.Now()
			run, err := h.startPrompt(ctx, s, fmt.Sprintf("overhead-%d", i), overheadMessage)
			if err != nil {
				return err
			}
			if err := promptDone(ctx, run, agent.StatusCompleted); err != nil {
				return err
			}
			d := time.Since(t0)
			if i < h.cfg.OverheadWarmup {
				return nil
			}
			prompt = append(prompt, ms(d))
			res.PromptActivities, err = h.addParts(ctx, run, promptParts)
			return err
		}
		timeBare := func() error {
			t0 := time.Now()
			run, err := h.startBare(ctx, s, fmt.Sprintf("bare-overhead-%d", i), BareInput{Payload: overheadMessage})
			if err != nil {
				return err
			}
			if err := bareDone(ctx, run); err != nil {
				return err
			}
			d := time.Since(t0)
			if i < h.cfg.OverheadWarmup {
				return nil
			}
			bare = append(bare, ms(d))
			res.BareActivities, err = h.addParts(ctx, run, bareParts)
			return err
		}
		first, second := timePrompt, timeBare
		if i%2 == 1 {
			first, second = timeBare, timePrompt
		}
		if err := first(); err != nil {
			return nil, err
		}
		if err := second(); err != nil {
			return nil, err
		}
		if (i+1)%10 == 0 {
			h.logf("overhead: %d/%d rounds", i+1, total)
		}
	}
	res.Prompt, res.Bare = dist(prompt), dist(bare)
	res.PromptParts, res.BareParts = medians(promptParts), medians(bareParts)
	res.Ratio = res.Prompt.P50 / res.Bare.P50
	res.RatioP95 = res.Prompt.P95 / res.Bare.P95
	return res, nil
}

// addParts adds one run's server-side time split (see OverheadResult) to
// parts and returns the run's activity count.
func (h *harness) addParts(ctx context.Context, run client.WorkflowRun, parts map[string][]float64) (int, error) {
	evs, err := h.history(ctx, run)
	if err != nil {
		return 0, err
	}
	scheduled := map[int64]*historypb.HistoryEvent{}
	sum := map[string]float64{}
	activities, tasks := 0, 0
	for _, ev := range evs {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
			scheduled[ev.GetEventId()] = ev
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			activities++
			s := scheduled[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()]
			name := "activity " + s.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
			sum[name] += ms(ev.GetEventTime().AsTime().Sub(s.GetEventTime().AsTime()))
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			tasks++
			s := scheduled[ev.GetWorkflowTaskCompletedEventAttributes().GetScheduledEventId()]
			sum["workflow tasks"] += ms(ev.GetEventTime().AsTime().Sub(s.GetEventTime().AsTime()))
		}
	}
	sum["workflow task count"] = float64(tasks)
	for k, v := range sum {
		parts[k] = append(parts[k], v)
	}
	return activities, nil
}

func medians(parts map[string][]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range parts {
		out[k] = dist(v).P50
	}
	return out
}
