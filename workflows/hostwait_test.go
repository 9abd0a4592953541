package workflows

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	enumspb "go.temporal.io/api/enums/v1"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
)

// toolSchedule is one RunTool activity as the workflow scheduled it.
type toolSchedule struct {
	id, queue string
	wait      time.Duration // schedule-to-start timeout
	at        time.Time
}

// scheduleRecorder records the options of every RunTool the workflow
// schedules (an outbound interceptor sees the activity options).
type scheduleRecorder struct {
	interceptor.WorkerInterceptorBase
	mu   sync.Mutex
	list []toolSchedule
}

func (r *scheduleRecorder) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &recorderInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, r: r}
}

func (r *scheduleRecorder) last() toolSchedule {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.list[len(r.list)-1]
}

func (r *scheduleRecorder) all() []toolSchedule {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]toolSchedule(nil), r.list...)
}

type recorderInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	r *scheduleRecorder
}

func (i *recorderInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&recorderOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}, r: i.r})
}

type recorderOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	r *scheduleRecorder
}

func (o *recorderOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...interface{}) workflow.Future {
	if activityType == activities.RunToolName {
		opts := workflow.GetActivityOptions(ctx)
		o.r.mu.Lock()
		o.r.list = append(o.r.list, toolSchedule{id: opts.ActivityID, queue: opts.TaskQueue, wait: opts.ScheduleToStartTimeout, at: workflow.Now(ctx)})
		o.r.mu.Unlock()
	}
	return o.Next.ExecuteActivity(ctx, activityType, args...)
}

// SPEC tools placement (docs/cluster.md): a tool call whose workspace host
// is gone waits for it — state waitingForHost and the current details
// say so — for as long as it takes, re-checking with a backoff capped at
// MaxHostRecheck so the history grows by a bounded number of events per
// hour; when the host's worker returns the call runs there and the prompt
// goes on. Virtual time: the host is away for 10 hours.
func TestToolHost_WaitBacksOffAndResumesWhenTheHostReturns(t *testing.T) {
	h := newHarness(t)
	h.acts.ToolHost = "host-a"
	rec := &scheduleRecorder{}
	h.env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{rec}})
	start := h.env.Now()
	const away = 10 * time.Hour
	back := start.Add(away)

	// Matching, as the test environment has none: a call queued for
	// host-a times out unstarted after its schedule-to-start timeout while
	// the host is away; once it is back, the host's worker picks the
	// queued call up and runs it for real.
	var ranOn []string
	h.env.OnActivity(activities.RunToolName, mock.Anything, mock.Anything).
		AfterFn(func() time.Duration {
			s, now := rec.last(), h.env.Now()
			if s.wait > 0 && !now.Add(s.wait).After(back) {
				return s.wait
			}
			return back.Sub(now)
		}).
		Return(func(ctx context.Context, in activities.RunToolInput) (activities.RunToolResult, error) {
			if h.env.Now().Before(back) {
				return activities.RunToolResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
			}
			ranOn = append(ranOn, activity.GetInfo(ctx).TaskQueue)
			return h.acts.RunTool(ctx, in)
		})

	var during agent.State
	var details string
	h.env.RegisterDelayedCallback(func() {
		during = h.state()
		v, err := h.env.QueryWorkflow("__temporal_workflow_metadata")
		if err != nil {
			t.Errorf("metadata query: %v", err)
			return
		}
		var md sdkpb.WorkflowMetadata
		if err := v.Get(&md); err != nil {
			t.Errorf("metadata: %v", err)
			return
		}
		details = md.GetCurrentDetails()
	}, 3*time.Hour)

	res, err := h.run(h.toolInput(`tool:bash {"command":"echo ran on the host"}`, "text:done"))
	if err != nil || res.Text != "done" {
		t.Fatalf("prompt: %+v, %v", res, err)
	}

	// While waiting: the state and the details name the host.
	if during.WaitingForHost != "host-a" || during.ToolHost != "host-a" {
		t.Errorf("state after 3 h: waitingForHost %q toolHost %q, want host-a", during.WaitingForHost, during.ToolHost)
	}
	if want := "Waiting for workspace host host-a since " + start.UTC().Format(time.RFC3339) + ": bash "; !strings.HasPrefix(details, want) ||
		!strings.Contains(details, "is queued on default-test-taskqueue@host-a") {
		t.Errorf("current details after 3 h: %q, want %q… naming the host's queue", details, want)
	}

	// The resume: the call ran once, on the host's queue, when it was
	// back, and its real output is the session's tool result.
	if len(ranOn) != 1 || ranOn[0] != activities.ToolQueue("default-test-taskqueue", "host-a") {
		t.Fatalf("tool ran on %v, want once on host-a's queue", ranOn)
	}
	if got := h.env.Now().Sub(start); got < away {
		t.Errorf("prompt finished after %v, before the host came back (%v)", got, away)
	}
	sess, err := h.store.Load("s1")
	if err != nil {
		t.Fatal(err)
	}
	var out string
	for _, e := range sess.Entries {
		if e.Message != nil && e.Message.Role == agent.RoleToolResult {
			out = e.Message.Text()
		}
	}
	if strings.TrimSpace(out) != "ran on the host" {
		t.Errorf("tool result %q, want the command's output", out)
	}
	if st := h.state(); st.WaitingForHost != "" {
		t.Errorf("after the prompt: waitingForHost %q", st.WaitingForHost)
	}

	// The re-checks: all on host-a's queue, each waiting at least as long
	// as the one before and at most MaxHostRecheck, so after the first
	// hour there are at most two an hour (each is one timed-out activity
	// and one workflow task: about 5 history events).
	list := rec.all()
	var prev time.Duration
	perHour := map[int]int{}
	for i, s := range list {
		if s.queue != activities.ToolQueue("default-test-taskqueue", "host-a") {
			t.Errorf("schedule %d on queue %q", i, s.queue)
		}
		if s.wait < prev || s.wait > MaxHostRecheck {
			t.Errorf("schedule %d waits %v after %v: want a non-decreasing wait up to %v", i, s.wait, prev, MaxHostRecheck)
		}
		prev = s.wait
		perHour[int(s.at.Sub(start)/time.Hour)]++
	}
	if list[0].wait != DefaultHostWait || prev != MaxHostRecheck {
		t.Errorf("waits from %v to %v, want from %v (tools.hostWaitMs default) to the cap %v", list[0].wait, prev, DefaultHostWait, MaxHostRecheck)
	}
	for hour := 1; hour < int(away/time.Hour); hour++ {
		if perHour[hour] > 2 {
			t.Errorf("hour %d of the wait has %d re-checks, want at most 2", hour, perHour[hour])
		}
	}
	if len(list) > 10+2*int(away/time.Hour) {
		t.Errorf("%d schedules in %v of waiting: the history is not bounded", len(list), away)
	}
	t.Logf("%d schedules over %v (per hour: %v); waits %v … %v", len(list), away, perHour, list[0].wait, prev)
}

// hostWait doubles the host wait per re-check up to MaxHostRecheck, and
// keeps a first wait that is longer than the cap.
func TestHostWait_DoublesUpToTheCap(t *testing.T) {
	for _, tc := range []struct {
		first time.Duration
		waits int
		want  time.Duration
	}{
		{10 * time.Second, 0, 10 * time.Second},
		{10 * time.Second, 1, 20 * time.Second},
		{10 * time.Second, 7, 1280 * time.Second},
		{10 * time.Second, 8, MaxHostRecheck},
		{10 * time.Second, 1000, MaxHostRecheck},
		{time.Hour, 3, time.Hour},
	} {
		if got := hostWait(tc.first, tc.waits); got != tc.want {
			t.Errorf("hostWait(%v, %d) = %v, want %v", tc.first, tc.waits, got, tc.want)
		}
	}
}
