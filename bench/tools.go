package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"google.golang.org/protobuf/proto"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/settings"
)

// Output sizes of the tools benchmark's bash calls.
const (
	toolsSmallOutput = 100
	toolsLargeOutput = 50 * 1024
)

// ToolsPoint is one prompt of Calls bash calls, each printing OutputBytes,
// summed over all the runs of its continue-as-new chain.
type ToolsPoint struct {
	Calls       int `json:"calls"`
	OutputBytes int `json:"outputBytes"`
	// Runs is the length of the continue-as-new chain.
	Runs   int `json:"runs"`
	Events int `json:"events"`
	Bytes  int `json:"bytes"`
	// ScriptBytes is the part of Bytes that is copies of the scripted
	// model's fault script (Calls+1 elements): it rides once, in the
	// first run's input (BeginPrompt keeps it beside the session; model
	// calls and the later runs' inputs carry none), so it grows with
	// Calls. A real provider has no script.
	ScriptBytes int `json:"scriptBytes"`
	ModelCalls  int `json:"modelCalls"`
	ToolCalls   int `json:"toolCalls"`
	ToolErrors  int `json:"toolErrors"`
	// ToolOutputMin and ToolOutputMax are the sizes of the tool results
	// (RunToolResult.Bytes) the worker reported.
	ToolOutputMin int `json:"toolOutputMinBytes"`
	ToolOutputMax int `json:"toolOutputMaxBytes"`
	// BytesPerCall is Bytes / Calls; NetBytesPerCall leaves the script
	// out: (Bytes - ScriptBytes) / Calls.
	BytesPerCall    int `json:"bytesPerCall"`
	NetBytesPerCall int `json:"netBytesPerCall"`
	// Ms is the prompt's wall time from the start request to the result.
	Ms float64 `json:"ms"`
	// Parts splits the server-side time of the whole chain (ms, summed):
	// each activity type from scheduled to completed, "workflow tasks"
	// from scheduled to completed, and the counts "workflow task count"
	// and "marker count" (local activities, side effects, versions).
	Parts map[string]float64 `json:"parts"`
}

// ToolsResult is the cost of a long agent loop: history per tool call as
// the prompt grows and as the outputs grow, and time per tool step
// against the bare workflow's activity round trip.
type ToolsResult struct {
	// ContinueAsNewEvents is agent.continueAsNewEvents (0: the workflow's
	// default).
	ContinueAsNewEvents int `json:"continueAsNewEvents"`
	Rounds              int `json:"rounds"`
	// Small and Large are prompts of few and of many calls with 100 B
	// outputs, LargeOutput the many calls with 50 KB outputs (the first
	// round's).
	Small       ToolsPoint `json:"small"`
	Large       ToolsPoint `json:"large"`
	LargeOutput ToolsPoint `json:"largeOutput"`
	// GrowthRatio is Large.NetBytesPerCall / Small.NetBytesPerCall;
	// OutputRatio LargeOutput's over Large's. The Raw ratios count the
	// script too.
	GrowthRatio    float64 `json:"growthRatio"`
	GrowthRatioRaw float64 `json:"growthRatioRaw"`
	OutputRatio    float64 `json:"outputRatio"`
	OutputRatioRaw float64 `json:"outputRatioRaw"`
	// Wall times (start to result) of the prompts of Small.Calls and
	// Large.Calls tool calls, and of bare runs of twice as many
	// sequential no-op activities (a tool step is two activities): their
	// distributions over the rounds and their means.
	PromptSmall         Dist    `json:"promptSmall"`
	PromptLarge         Dist    `json:"promptLarge"`
	BareSmall           Dist    `json:"bareSmall"`
	BareLarge           Dist    `json:"bareLarge"`
	PromptSmallMs       float64 `json:"promptSmallMeanMs"`
	PromptLargeMs       float64 `json:"promptLargeMeanMs"`
	BareSmallMs         float64 `json:"bareSmallMeanMs"`
	BareLargeMs         float64 `json:"bareLargeMeanMs"`
	BareSmallActivities int     `json:"bareSmallActivities"`
	BareLargeActivities int     `json:"bareLargeActivities"`
	// StepMs is (PromptLargeMs - PromptSmallMs) / (Large.Calls -
	// Small.Calls): one tool step, a model call and a tool call.
	// BareActivityMs is the same difference of the bare runs per
	// activity. StepRatio is StepMs / (2 * BareActivityMs). Means, not
	// medians: each sample already averages hundreds of steps, and a
	// nearest-rank median of 2 rounds would be their minimum.
	StepMs         float64 `json:"stepMs"`
	BareActivityMs float64 `json:"bareActivityMs"`
	StepRatio      float64 `json:"stepRatio"`
}

// toolsScript is the fault script of a prompt of n bash calls that each
// print out bytes, then a final answer.
func toolsScript(n, out int) []string {
	script := make([]string, 0, n+1)
	call := fmt.Sprintf(`tool:bash {"command":"printf '%%0%dd' 0"}`, out)
	for i := 0; i < n; i++ {
		script = append(script, call)
	}
	return append(script, "text:done")
}

// toolsBench runs prompts of ToolsSmallCalls and ToolsCalls bash calls
// (100 B outputs) and bare runs of twice as many activities, interleaved
// (the order alternates every round), then one prompt of ToolsCalls calls
// with 50 KB outputs. The scripted model answers at once and does not
// stream, so the times are orchestration. Compaction is off: 1000 outputs
// of 50 KB would pass the context window, and the benchmark measures the
// loop, not compaction.
func (h *harness) toolsBench(ctx context.Context) (*ToolsResult, error) {
	s := h.scenario("tools")
	s.Scripted.LatencyMs, s.Scripted.StreamDelayMs = 0, 0
	s.Compaction.Enabled = false
	s.Agent.ContinueAsNewEvents = h.cfg.ToolsContinueAsNewEvents
	workspace := filepath.Join(h.dir, "tools-workspace")
	if err := os.MkdirAll(workspace, 0o755); err != nil {
		return nil, err
	}
	w, err := startChild(ctx, s)
	if err != nil {
		return nil, err
	}
	defer w.stop()

	small, large := h.cfg.ToolsSmallCalls, h.cfg.ToolsCalls
	if small < 1 || large <= small {
		return nil, fmt.Errorf("tools: want 1 <= ToolsSmallCalls < ToolsCalls, have %d and %d", small, large)
	}
	rounds := max(h.cfg.ToolsRounds, 1)
	res := &ToolsResult{ContinueAsNewEvents: s.Agent.ContinueAsNewEvents, Rounds: rounds,
		BareSmallActivities: 2 * small, BareLargeActivities: 2 * large}
	payload := filler(toolsSmallOutput, "bare")

	prompt := func(name string, n, out int) (ToolsPoint, error) {
		pt, err := h.toolsPrompt(ctx, s, workspace, name, n, out)
		if err == nil {
			h.logf("tools: %s: %d calls of %d B in %.0f ms, %d runs, %d B per call (%d B without the script); per call %s",
				name, n, out, pt.Ms, pt.Runs, pt.BytesPerCall, pt.NetBytesPerCall, pt.perCall())
		}
		return pt, err
	}
	bare := func(name string, k int) (float64, error) {
		t0 := time.Now()
		run, err := h.startBare(ctx, s, "bare-"+name, BareInput{Payload: payload, Activities: k})
		if err != nil {
			return 0, err
		}
		if err := bareDone(ctx, run); err != nil {
			return 0, err
		}
		d := ms(time.Since(t0))
		h.logf("tools: bare %s: %d activities in %.0f ms", name, k, d)
		return d, nil
	}

	// Warm-up: the worker's first workflows and bash's first start.
	if _, err := prompt("tools-warmup", small, toolsSmallOutput); err != nil {
		return nil, err
	}
	if _, err := bare("tools-warmup", 2*small); err != nil {
		return nil, err
	}

	var pSmall, pLarge, bSmall, bLarge []float64
	for r := 0; r < rounds; r++ {
		steps := []func() error{
			func() error {
				pt, err := prompt(fmt.Sprintf("tools-small-%d", r), small, toolsSmallOutput)
				if r == 0 {
					res.Small = pt
				}
				pSmall = append(pSmall, pt.Ms)
				return err
			},
			func() error {
				d, err := bare(fmt.Sprintf("tools-small-%d", r), 2*small)
				bSmall = append(bSmall, d)
				return err
			},
			func() error {
				pt, err := prompt(fmt.Sprintf("tools-large-%d", r), large, toolsSmallOutput)
				if r == 0 {
					res.Large = pt
				}
				pLarge = append(pLarge, pt.Ms)
				return err
			},
			func() error {
				d, err := bare(fmt.Sprintf("tools-large-%d", r), 2*large)
				bLarge = append(bLarge, d)
				return err
			},
		}
		if r%2 == 1 {
			steps[0], steps[1], steps[2], steps[3] = steps[1], steps[0], steps[3], steps[2]
		}
		for _, st := range steps {
			if err := st(); err != nil {
				return nil, err
			}
		}
	}
	if res.LargeOutput, err = prompt("tools-large-output", large, toolsLargeOutput); err != nil {
		return nil, err
	}

	res.PromptSmall, res.PromptLarge = dist(pSmall), dist(pLarge)
	res.BareSmall, res.BareLarge = dist(bSmall), dist(bLarge)
	res.GrowthRatio = float64(res.Large.NetBytesPerCall) / float64(res.Small.NetBytesPerCall)
	res.GrowthRatioRaw = float64(res.Large.BytesPerCall) / float64(res.Small.BytesPerCall)
	res.OutputRatio = float64(res.LargeOutput.NetBytesPerCall) / float64(res.Large.NetBytesPerCall)
	res.OutputRatioRaw = float64(res.LargeOutput.BytesPerCall) / float64(res.Large.BytesPerCall)
	res.PromptSmallMs, res.PromptLargeMs = mean(pSmall), mean(pLarge)
	res.BareSmallMs, res.BareLargeMs = mean(bSmall), mean(bLarge)
	res.StepMs = (res.PromptLargeMs - res.PromptSmallMs) / float64(large-small)
	res.BareActivityMs = (res.BareLargeMs - res.BareSmallMs) / float64(2*(large-small))
	res.StepRatio = res.StepMs / (2 * res.BareActivityMs)
	return res, nil
}

// toolsPrompt runs one prompt of n bash calls printing out bytes each in a
// session of its own, and measures its whole continue-as-new chain.
func (h *harness) toolsPrompt(ctx context.Context, s settings.Settings, workspace, sess string, n, out int) (ToolsPoint, error) {
	pt := ToolsPoint{Calls: n, OutputBytes: out}
	in := client.PromptInput(s, sess, fmt.Sprintf("run %d commands", n))
	in.Workspace = workspace
	in.Model.Faults = toolsScript(n, out)
	script, err := json.Marshal(in.Model.Faults)
	if err != nil {
		return pt, err
	}
	t0 := time.Now()
	run, err := h.startInput(ctx, s, in)
	if err != nil {
		return pt, err
	}
	runID := run.GetRunID()
	if err := promptDone(ctx, run, agent.StatusCompleted); err != nil {
		return pt, err
	}
	pt.Ms = ms(time.Since(t0))
	if err := h.chainStats(ctx, run.GetID(), runID, script, &pt); err != nil {
		return pt, err
	}
	switch {
	case pt.ToolCalls != n || pt.ModelCalls != n+1:
		return pt, fmt.Errorf("prompt %s: %d tool calls and %d model calls in %d runs (%d events), want %d and %d", sess, pt.ToolCalls, pt.ModelCalls, pt.Runs, pt.Events, n, n+1)
	case pt.ToolErrors > 0:
		return pt, fmt.Errorf("prompt %s: %d of its tool calls failed", sess, pt.ToolErrors)
	}
	pt.BytesPerCall = pt.Bytes / n
	pt.NetBytesPerCall = (pt.Bytes - pt.ScriptBytes) / n
	return pt, nil
}

// chainStats adds up the histories of a prompt's runs, from its first run
// along the continue-as-new chain (each run's last event names the next
// run), into pt. script is the fault script as its JSON encoding appears
// in payloads (the codec off; with it on no copy is found).
func (h *harness) chainStats(ctx context.Context, id, runID string, script []byte, pt *ToolsPoint) error {
	// Any run's started event names the chain's first run (the run id a
	// start hands back is the first one, but a retried start hands back
	// the latest, and the SDK moves a run's id along the chain as Get
	// follows it).
	evs, err := h.runHistory(ctx, id, runID, 1)
	if err != nil {
		return err
	}
	if len(evs) == 0 {
		return fmt.Errorf("history of %s is empty", id)
	}
	if first := evs[0].GetWorkflowExecutionStartedEventAttributes().GetFirstExecutionRunId(); first != "" {
		runID = first
	}
	pt.ToolOutputMin = -1
	pt.Parts = map[string]float64{}
	for runID != "" {
		evs, err := h.runHistory(ctx, id, runID, 0)
		if err != nil {
			return err
		}
		pt.Runs++
		pt.Events += len(evs)
		runID = ""
		scheduled := map[int64]string{}
		at := map[int64]time.Time{}
		for _, ev := range evs {
			pt.Bytes += proto.Size(ev)
			if b, err := proto.Marshal(ev); err == nil && len(script) > 2 {
				pt.ScriptBytes += bytes.Count(b, script) * len(script)
			}
			switch ev.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
				at[ev.GetEventId()] = ev.GetEventTime().AsTime()
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
				sched := at[ev.GetWorkflowTaskCompletedEventAttributes().GetScheduledEventId()]
				pt.Parts["workflow tasks"] += ms(ev.GetEventTime().AsTime().Sub(sched))
				pt.Parts["workflow task count"]++
			case enumspb.EVENT_TYPE_MARKER_RECORDED:
				pt.Parts["marker count"]++
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				name := ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
				scheduled[ev.GetEventId()] = name
				at[ev.GetEventId()] = ev.GetEventTime().AsTime()
				switch name {
				case activities.CallModelName:
					pt.ModelCalls++
				case activities.RunToolName:
					pt.ToolCalls++
				}
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
				a := ev.GetActivityTaskCompletedEventAttributes()
				if name := scheduled[a.GetScheduledEventId()]; name != "" {
					pt.Parts["activity "+name] += ms(ev.GetEventTime().AsTime().Sub(at[a.GetScheduledEventId()]))
				}
				if scheduled[a.GetScheduledEventId()] != activities.RunToolName || len(a.GetResult().GetPayloads()) == 0 {
					continue
				}
				var r activities.RunToolResult
				if json.Unmarshal(a.GetResult().GetPayloads()[0].GetData(), &r) != nil {
					continue // encrypted by the codec
				}
				if r.IsError {
					pt.ToolErrors++
				}
				if pt.ToolOutputMin < 0 || r.Bytes < pt.ToolOutputMin {
					pt.ToolOutputMin = r.Bytes
				}
				pt.ToolOutputMax = max(pt.ToolOutputMax, r.Bytes)
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED, enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
				if scheduled[ev.GetActivityTaskFailedEventAttributes().GetScheduledEventId()] == activities.RunToolName ||
					scheduled[ev.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId()] == activities.RunToolName {
					pt.ToolErrors++
				}
			case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
				runID = ev.GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId()
			}
		}
	}
	pt.ToolOutputMin = max(pt.ToolOutputMin, 0)
	return nil
}

// runHistory reads the history of one run (limit > 0: at most that many
// events).
func (h *harness) runHistory(ctx context.Context, id, runID string, limit int) ([]*historypb.HistoryEvent, error) {
	iter := h.c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var evs []*historypb.HistoryEvent
	for iter.HasNext() && (limit <= 0 || len(evs) < limit) {
		ev, err := iter.Next()
		if err != nil {
			return nil, fmt.Errorf("history of %s run %s: %w", id, runID, err)
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// perCall renders Parts per tool call.
func (pt ToolsPoint) perCall() string {
	n := float64(max(pt.Calls, 1))
	return fmt.Sprintf("%s %.1f ms, %s %.1f ms, %.1f workflow tasks %.1f ms, %.1f markers",
		activities.CallModelName, pt.Parts["activity "+activities.CallModelName]/n,
		activities.RunToolName, pt.Parts["activity "+activities.RunToolName]/n,
		pt.Parts["workflow task count"]/n, pt.Parts["workflow tasks"]/n, pt.Parts["marker count"]/n)
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}
