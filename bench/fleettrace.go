package main

// Where the fleet benchmark's time goes: a trace of one run of fleet.go.
// It records when the model calls were made (limited or answered), when
// the jobs ended, the rate-limit window operations of the worker (how many
// and how long each took under the store's lock) and the heartbeats the
// worker's calls recorded, so the two sides of the benchmark can be
// compared phase by phase instead of by their wall times alone.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/auth"
	"github.com/durableagent/durableagent/internal/llm"
)

// FleetTrace is the timeline of one fleet run, in seconds from its start.
type FleetTrace struct {
	// LastStartSec is when the last job was started, LimitEndSec when the
	// provider's limit ended.
	LastStartSec float64 `json:"lastStartSec"`
	LimitEndSec  float64 `json:"limitEndSec"`
	// LastLimitedSec is the last call answered with the 429;
	// FirstAnsweredSec, AnsweredP50Sec and LastAnsweredSec are calls the
	// provider answered after the limit.
	LastLimitedSec   float64 `json:"lastLimitedSec"`
	FirstAnsweredSec float64 `json:"firstAnsweredSec"`
	AnsweredP50Sec   float64 `json:"answeredP50Sec"`
	LastAnsweredSec  float64 `json:"lastAnsweredSec"`
	// DoneP50Sec, DoneP90Sec and LastDoneSec are the jobs' close times.
	DoneP50Sec  float64 `json:"doneP50Sec"`
	DoneP90Sec  float64 `json:"doneP90Sec"`
	LastDoneSec float64 `json:"lastDoneSec"`
	// Admits are the window store's Admit calls, AdmitMeanMs and
	// AdmitMaxMs how long they took (the store's lock included).
	Admits      int64   `json:"admits"`
	AdmitMeanMs float64 `json:"admitMeanMs"`
	AdmitMaxMs  float64 `json:"admitMaxMs"`
	// CallsHeld are the model calls (CallModel executions) that held for
	// the window, HeldP50Sec and HeldMaxSec how long; QueuedP50Sec and
	// QueuedMaxSec are the model calls' time from scheduled to started
	// (waiting for the worker to take them), and StartedLastSec the last
	// model call's start.
	CallsHeld      int     `json:"callsHeld"`
	HeldP50Sec     float64 `json:"heldP50Sec"`
	HeldMaxSec     float64 `json:"heldMaxSec"`
	QueuedP50Sec   float64 `json:"queuedP50Sec"`
	QueuedMaxSec   float64 `json:"queuedMaxSec"`
	StartedLastSec float64 `json:"startedLastSec"`
	// Phases are the jobs' time in each phase of a prompt, from their
	// histories: the sum over all jobs and the 90th percentile.
	Phases []FleetPhase `json:"phases"`
	// TaskTimeouts are the workflow tasks that timed out (a sticky task
	// the worker did not take within its schedule-to-start timeout, run
	// again on the normal queue with the whole history replayed), and
	// OneCallJobs the jobs Phases count.
	TaskTimeouts int `json:"taskTimeouts"`
	OneCallJobs  int `json:"oneCallJobs"`
	// Heartbeats are the heartbeats the worker's activities recorded
	// (each about one heartbeat RPC, a write of the workflow's mutable
	// state on the server).
	Heartbeats int64 `json:"heartbeats"`
}

// FleetPhase is one phase of the jobs' prompts (see phasesOf).
type FleetPhase struct {
	Name   string  `json:"name"`
	SumSec float64 `json:"sumSec"`
	P90Sec float64 `json:"p90Sec"`
}

// phaseNames are the phases of a prompt that made one model call, as its
// history shows them: start to its first workflow task, that task and its
// local activity (BeginPrompt) to the model call's scheduling, the call
// waiting for the worker, the call (its hold included), and its end to the
// prompt's.
var phaseNames = []string{"start to first task", "first task to model call", "model call queued", "model call", "model call to end"}

// phasesOf are the phases of one job's history (nil when it is not the
// one-call shape, such as a job that retried).
func phasesOf(evs []*historypb.HistoryEvent) []time.Duration {
	var start, firstTask, sched, started, completed, end time.Time
	var calls int
	for _, e := range evs {
		at := e.GetEventTime().AsTime()
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
			start = at
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
			if firstTask.IsZero() {
				firstTask = at
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if e.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == activities.CallModelName {
				calls++
				sched = at
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			if calls == 1 && started.IsZero() {
				started = at
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			if calls == 1 && completed.IsZero() {
				completed = at
			}
		case enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
			end = at
		}
	}
	if calls != 1 || start.IsZero() || firstTask.IsZero() || started.IsZero() || completed.IsZero() || end.IsZero() {
		return nil
	}
	return []time.Duration{firstTask.Sub(start), sched.Sub(firstTask), started.Sub(sched), completed.Sub(started), end.Sub(completed)}
}

// fleetTracer collects a FleetTrace.
type fleetTracer struct {
	start time.Time

	mu       sync.Mutex
	limited  []time.Duration
	answered []time.Duration

	held, queued, started []time.Duration

	admits, admitNs, admitMaxNs atomic.Int64
	beats                       atomic.Int64
}

func (t *fleetTracer) since() time.Duration { return time.Since(t.start) }

// provider records the calls p answers: limited (a 429) or not.
func (t *fleetTracer) provider(p llm.Provider) llm.Provider {
	return tracedProvider{p, t}
}

type tracedProvider struct {
	llm.Provider
	t *fleetTracer
}

func (p tracedProvider) Complete(ctx context.Context, req llm.Request) agent.Message {
	msg := p.Provider.Complete(ctx, req)
	at := p.t.since()
	p.t.mu.Lock()
	defer p.t.mu.Unlock()
	switch {
	case msg.ErrorStatus == 429:
		p.t.limited = append(p.t.limited, at)
	case msg.StopReason != agent.StopReasonAborted:
		p.t.answered = append(p.t.answered, at)
	}
	return msg
}

// windows times w's Admit calls.
func (t *fleetTracer) windows(w activities.RateWindows) activities.RateWindows {
	if w == nil {
		return nil
	}
	return tracedWindows{w, t}
}

type tracedWindows struct {
	activities.RateWindows
	t *fleetTracer
}

func (w tracedWindows) Admit(key, holder string, lease time.Duration) (auth.Admission, error) {
	t0 := time.Now()
	a, err := w.RateWindows.Admit(key, holder, lease)
	d := time.Since(t0).Nanoseconds()
	w.t.admits.Add(1)
	w.t.admitNs.Add(d)
	for m := w.t.admitMaxNs.Load(); d > m && !w.t.admitMaxNs.CompareAndSwap(m, d); m = w.t.admitMaxNs.Load() {
	}
	return a, err
}

// interceptor counts the heartbeats the worker's activities record.
// and times the model calls (queued, held).
func (t *fleetTracer) interceptor() interceptor.WorkerInterceptor { return &beatCounter{t: t} }

type beatCounter struct {
	interceptor.WorkerInterceptorBase
	t *fleetTracer
}

func (b *beatCounter) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &beatInbound{t: b.t}
	i.Next = next
	return i
}

type beatInbound struct {
	interceptor.ActivityInboundInterceptorBase
	t *fleetTracer
}

func (i *beatInbound) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	info := activity.GetInfo(ctx)
	res, err := i.Next.ExecuteActivity(ctx, in)
	if info.ActivityType.Name != "CallModel" {
		return res, err
	}
	i.t.mu.Lock()
	defer i.t.mu.Unlock()
	i.t.started = append(i.t.started, info.StartedTime.Sub(i.t.start))
	i.t.queued = append(i.t.queued, info.StartedTime.Sub(info.ScheduledTime))
	if r, ok := res.(activities.CallModelResult); ok && r.HeldMs > 0 {
		i.t.held = append(i.t.held, time.Duration(r.HeldMs)*time.Millisecond)
	}
	return res, err
}

func (i *beatInbound) Init(out interceptor.ActivityOutboundInterceptor) error {
	o := &beatOutbound{n: &i.t.beats}
	o.Next = out
	return i.Next.Init(o)
}

type beatOutbound struct {
	interceptor.ActivityOutboundInterceptorBase
	n *atomic.Int64
}

func (o *beatOutbound) RecordHeartbeat(ctx context.Context, details ...any) {
	o.n.Add(1)
	o.Next.RecordHeartbeat(ctx, details...)
}

// trace is the timeline; limitEnd and lastStart are from the run, the
// jobs' close times are asked of the server.
func (t *fleetTracer) trace(ctx context.Context, h *harness, runs []client.WorkflowRun, lastStart, limitEnd time.Duration) (FleetTrace, error) {
	c := h.c
	var done []time.Duration
	phases := make([][]time.Duration, len(phaseNames))
	var oneCall, timeouts int
	for _, run := range runs {
		evs, err := h.history(ctx, run)
		if err != nil {
			return FleetTrace{}, fmt.Errorf("fleet trace: history of %s: %w", run.GetID(), err)
		}
		ph := phasesOf(evs)
		for i, d := range ph {
			phases[i] = append(phases[i], d)
		}
		if ph != nil {
			oneCall++
		}
		for _, e := range evs {
			if e.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT {
				timeouts++
			}
		}
		d, err := c.DescribeWorkflowExecution(ctx, run.GetID(), "")
		if err != nil {
			return FleetTrace{}, fmt.Errorf("fleet trace: describe %s: %w", run.GetID(), err)
		}
		if ct := d.GetWorkflowExecutionInfo().GetCloseTime(); ct != nil {
			done = append(done, ct.AsTime().Sub(t.start))
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var after []time.Duration
	for _, a := range t.answered {
		if a >= limitEnd {
			after = append(after, a)
		}
	}
	tr := FleetTrace{
		LastStartSec: lastStart.Seconds(), LimitEndSec: limitEnd.Seconds(),
		LastLimitedSec:   pct(t.limited, 1),
		FirstAnsweredSec: pct(after, 0), AnsweredP50Sec: pct(after, 0.5), LastAnsweredSec: pct(after, 1),
		DoneP50Sec: pct(done, 0.5), DoneP90Sec: pct(done, 0.9), LastDoneSec: pct(done, 1),
		CallsHeld: len(t.held), HeldP50Sec: pct(t.held, 0.5), HeldMaxSec: pct(t.held, 1),
		QueuedP50Sec: pct(t.queued, 0.5), QueuedMaxSec: pct(t.queued, 1), StartedLastSec: pct(t.started, 1),
		Admits: t.admits.Load(), Heartbeats: t.beats.Load(), TaskTimeouts: timeouts, OneCallJobs: oneCall,
		AdmitMaxMs: float64(t.admitMaxNs.Load()) / 1e6,
	}
	for i, name := range phaseNames {
		var sum time.Duration
		for _, d := range phases[i] {
			sum += d
		}
		tr.Phases = append(tr.Phases, FleetPhase{Name: name, SumSec: sum.Seconds(), P90Sec: pct(phases[i], 0.9)})
	}
	if tr.Admits > 0 {
		tr.AdmitMeanMs = float64(t.admitNs.Load()) / float64(tr.Admits) / 1e6
	}
	return tr, nil
}

// pct is the q-quantile of ds in seconds (0: the first, 1: the last).
func pct(ds []time.Duration, q float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))].Seconds()
}

func (tr FleetTrace) String() string {
	var ph []string
	for _, p := range tr.Phases {
		ph = append(ph, fmt.Sprintf("%s %.0fs (p90 %.1fs)", p.Name, p.SumSec, p.P90Sec))
	}
	return fmt.Sprintf("%d workflow tasks timed out; time of the %d one-call jobs by phase: ", tr.TaskTimeouts, tr.OneCallJobs) +
		strings.Join(ph, ", ") + "; " + fmt.Sprintf("last start %.1fs, limit end %.1fs, last 429 %.1fs; answered after the limit: first %.1fs, p50 %.1fs, last %.1fs; jobs done: p50 %.1fs, p90 %.1fs, last %.1fs; model calls: %d held (p50 %.1fs, max %.1fs), queued p50 %.2fs max %.1fs, last started %.1fs; %d admits (mean %.1f ms, max %.0f ms); %d heartbeats",
		tr.LastStartSec, tr.LimitEndSec, tr.LastLimitedSec, tr.FirstAnsweredSec, tr.AnsweredP50Sec, tr.LastAnsweredSec,
		tr.DoneP50Sec, tr.DoneP90Sec, tr.LastDoneSec,
		tr.CallsHeld, tr.HeldP50Sec, tr.HeldMaxSec, tr.QueuedP50Sec, tr.QueuedMaxSec, tr.StartedLastSec, tr.Admits, tr.AdmitMeanMs, tr.AdmitMaxMs, tr.Heartbeats)
}
