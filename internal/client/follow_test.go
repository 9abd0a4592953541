package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/serviceerror"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/workflows"
)

// fakeTemporal is the part of client.Client that Follow uses, over an
// in-memory set of runs of one workflow id.
type fakeTemporal struct {
	client.Client // nil: any other method panics

	mu      sync.Mutex
	runs    map[string]*fakeRun
	current string
	// queryErr / describeErr, when set, fail the calls.
	queryErr    error
	describeErr error
	queries     int
	describes   int
}

type fakeRun struct {
	id      string
	status  enumspb.WorkflowExecutionStatus
	events  []agent.Event
	pending []live.Snapshot
	beats   map[string]time.Time // when each pending snapshot was first seen
	// histLen is the history length Describe reports (0: none, as a
	// server that does not say).
	histLen int64
}

// GetWorkflow is the run's result: a finished run (completed, failed,
// cancelled) has one whose LastEvents are all its events; any other has
// none.
func (f *fakeTemporal) GetWorkflow(ctx context.Context, workflowID, runID string) client.WorkflowRun {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, err := f.run(runID)
	if err != nil {
		return fakeResult{}
	}
	switch r.status {
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return fakeResult{events: append([]agent.Event{}, r.events...)}
	}
	return fakeResult{}
}

type fakeResult struct {
	client.WorkflowRun
	events []agent.Event
}

func (r fakeResult) Get(_ context.Context, out any) error {
	if r.events == nil {
		return errors.New("no result in the fake")
	}
	*out.(*workflows.PromptResult) = workflows.PromptResult{Status: agent.StatusCompleted, LastEvents: r.events}
	return nil
}

func newFake(runs ...*fakeRun) *fakeTemporal {
	f := &fakeTemporal{runs: map[string]*fakeRun{}}
	for _, r := range runs {
		if r.status == 0 {
			r.status = enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
		}
		f.runs[r.id] = r
		f.current = r.id
	}
	return f
}

func (f *fakeTemporal) do(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

func (f *fakeTemporal) run(id string) (*fakeRun, error) {
	if id == "" {
		id = f.current
	}
	r, ok := f.runs[id]
	if !ok {
		return nil, serviceerror.NewNotFound("workflow not found")
	}
	return r, nil
}

type encoded struct{ b []byte }

func (e encoded) HasValue() bool    { return true }
func (e encoded) Get(ptr any) error { return json.Unmarshal(e.b, ptr) }

func (f *fakeTemporal) QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...any) (converter.EncodedValue, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries++
	if f.queryErr != nil {
		return nil, f.queryErr
	}
	r, err := f.run(runID)
	if err != nil {
		return nil, err
	}
	after := args[0].(int64)
	out := []agent.Event{}
	for _, e := range r.events {
		if e.Seq > after {
			out = append(out, e)
		}
	}
	b, _ := json.Marshal(out)
	return encoded{b}, nil
}

func (f *fakeTemporal) DescribeWorkflowExecution(ctx context.Context, workflowID, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.describes++
	if f.describeErr != nil {
		return nil, f.describeErr
	}
	r, err := f.run(runID)
	if err != nil {
		return nil, err
	}
	resp := &workflowservice.DescribeWorkflowExecutionResponse{
		WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
			Execution:     &commonpb.WorkflowExecution{WorkflowId: workflowID, RunId: r.id},
			Status:        r.status,
			HistoryLength: r.histLen,
		},
	}
	for i, s := range r.pending {
		p, err := converter.GetDefaultDataConverter().ToPayloads(s)
		if err != nil {
			panic(err)
		}
		// A heartbeat lands when the snapshot changes.
		key := fmt.Sprint(i) + string(p.GetPayloads()[0].GetData())
		if r.beats == nil {
			r.beats = map[string]time.Time{}
		}
		at, ok := r.beats[key]
		if !ok {
			at = time.Now()
			r.beats[key] = at
		}
		resp.PendingActivities = append(resp.PendingActivities, &workflowpb.PendingActivityInfo{
			ActivityId: fmt.Sprint(i), HeartbeatDetails: p, LastHeartbeatTime: timestamppb.New(at),
		})
	}
	if len(r.pending) > 0 {
		// An activity that heartbeats something else.
		p, _ := converter.GetDefaultDataConverter().ToPayloads("calling model")
		resp.PendingActivities = append(resp.PendingActivities, &workflowpb.PendingActivityInfo{ActivityId: "x", HeartbeatDetails: p})
	}
	return resp, nil
}

type historyIter struct{}

func (h *historyIter) HasNext() bool                          { return false }
func (h *historyIter) Next() (*historypb.HistoryEvent, error) { return nil, errors.New("no history") }

// GetWorkflowHistory: no run continued as new.
func (f *fakeTemporal) GetWorkflowHistory(ctx context.Context, workflowID, runID string, isLongPoll bool, filter enumspb.HistoryEventFilterType) client.HistoryEventIterator {
	return &historyIter{}
}

func evs(from, to int64, lastType string) []agent.Event {
	var out []agent.Event
	for s := from; s <= to; s++ {
		out = append(out, agent.Event{Type: agent.EventAgentStart, Seq: s})
	}
	if lastType != "" {
		out[len(out)-1].Type = lastType
		if lastType == agent.EventPromptEnd {
			out[len(out)-1].Status = agent.StatusCompleted
		}
	}
	return out
}

// fastUnreachable is how long the tests' Follow outlasts Temporal not
// answering.
const fastUnreachable = 300 * time.Millisecond

func fastController(f *fakeTemporal) *Controller {
	return &Controller{Client: f, poll: 5 * time.Millisecond, status: 30 * time.Millisecond,
		QueryTimeout: time.Second}
}

type recorder struct {
	mu   sync.Mutex
	evs  []agent.Event
	live []agent.Event
}

func (r *recorder) fn(e agent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if live.IsLive(e) {
		r.live = append(r.live, e)
	}
	r.evs = append(r.evs, e)
}

// workflow events only, checked to be seq after+1, after+2, ...
func (r *recorder) checkSeqs(t *testing.T, after, last int64) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	want := after + 1
	for _, e := range r.evs {
		if live.IsLive(e) {
			continue
		}
		if e.Seq != want {
			t.Fatalf("got seq %d, want %d (events %v)", e.Seq, want, seqs(r.evs))
		}
		want++
	}
	if want != last+1 {
		t.Fatalf("delivered up to %d, want %d", want-1, last)
	}
}

func seqs(evs []agent.Event) []int64 {
	var out []int64
	for _, e := range evs {
		out = append(out, e.Seq)
	}
	return out
}

func follow(t *testing.T, k *Controller, runID string, after int64, r *recorder) (agent.Event, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return k.follow(ctx, "s1", runID, after, fastUnreachable, r.fn)
}

// Item 4: a prompt closed without prompt_end ends Follow with an error
// naming its status. The event it wrote before it closed is read from its
// result; a run closed without one (terminated, timed out) has no events
// the follower did not read before (docs/live.md).
func TestFollow_ClosedWithoutPromptEnd(t *testing.T) {
	cases := []struct {
		status enumspb.WorkflowExecutionStatus
		noLast bool // closed without a result: its last event may not be read
		text   string
	}{
		{enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, true, "prompt in session s1 was terminated (workflow session-s1 run r1)"},
		{enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT, true, "prompt in session s1 timed out (workflow session-s1 run r1)"},
		{enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, false, "failed without a prompt_end event"},
		{enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED, false, "was cancelled"},
		{enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, false, "completed without a prompt_end event"},
	}
	for _, c := range cases {
		t.Run(c.status.String(), func(t *testing.T) {
			f := newFake(&fakeRun{id: "r1", events: evs(1, 3, "")})
			r := &recorder{}
			done := make(chan error, 1)
			go func() {
				_, err := follow(t, fastController(f), "", 0, r)
				done <- err
			}()
			time.Sleep(40 * time.Millisecond)
			f.do(func() {
				f.runs["r1"].events = evs(1, 4, "") // one more before it closed
				f.runs["r1"].status = c.status
			})
			err := <-done
			var ce *PromptClosedError
			if !errors.Is(err, ErrPromptClosed) || !errors.As(err, &ce) || ce.Status != c.status {
				t.Fatalf("err %v, want a PromptClosedError of status %v", err, c.status)
			}
			if !strings.Contains(err.Error(), c.text) {
				t.Fatalf("err %q, want it to say %q", err, c.text)
			}
			last := int64(4)
			if c.noLast {
				last = r.evs[len(r.evs)-1].Seq // 3, or 4 if a query came first
			}
			r.checkSeqs(t, 0, last)
		})
	}
}

// Spec 13.10.9 (issue 26): while a call runs, the events query, which a
// worker answers and which at 100 prompts delayed the workflow tasks, is
// made only when a Describe saw the run's history grow since the last
// one; new events still arrive at the poll's pace.
func TestFollow_QueriesOnlyWhenTheHistoryGrew(t *testing.T) {
	start := agent.Event{Type: agent.EventMessageStart, Seq: 4, EntryID: "a1"}
	acc := live.NewModel("a1", 0)
	acc.Add(llmDelta("thinking"))
	f := newFake(&fakeRun{id: "r1", events: append(evs(1, 3, ""), start), histLen: 10,
		pending: []live.Snapshot{acc.Snapshot()}})
	r := &recorder{}
	done := make(chan error, 1)
	go func() {
		_, err := follow(t, fastController(f), "", 0, r)
		done <- err
	}()
	time.Sleep(300 * time.Millisecond) // 60 polls of 5 ms
	var queries, describes int
	f.do(func() { queries, describes = f.queries, f.describes })
	if queries > 2 || describes < 10 {
		t.Fatalf("%d queries and %d Describes in 300 ms of an unchanged history, want 1 or 2 queries (the first) and Describes at the poll's pace", queries, describes)
	}
	f.do(func() {
		f.runs["r1"].events = append(f.runs["r1"].events, agent.Event{Type: agent.EventPromptEnd, Seq: 5, Status: agent.StatusCompleted})
		f.runs["r1"].pending = nil
		f.runs["r1"].histLen = 14
	})
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Second):
		t.Fatal("the events after the history grew did not arrive within 1 s")
	}
	r.checkSeqs(t, 0, 5)
}

// Follow of a session that never ran a prompt ends at once with
// ErrNoPrompt.
func TestFollow_NoPrompt(t *testing.T) {
	if _, err := follow(t, fastController(newFake()), "", 0, &recorder{}); !errors.Is(err, ErrNoPrompt) {
		t.Fatalf("no such workflow: %v", err)
	}
}

// Item 5: Temporal itself unreachable: an error after the bound, not a
// raw "context deadline exceeded"; a terminate seen while the worker is
// away still ends Follow.
func TestFollow_TemporalUnreachable(t *testing.T) {
	f := newFake(&fakeRun{id: "r1", events: evs(1, 2, "")})
	down := serviceerror.NewUnavailable("connection refused")
	k := fastController(f)
	var waits []string
	k.OnWait = func(msg string) { waits = append(waits, msg) }
	r := &recorder{}
	done := make(chan error, 1)
	go func() {
		_, err := follow(t, k, "", 0, r)
		done <- err
	}()
	time.Sleep(30 * time.Millisecond)
	start := time.Now()
	f.do(func() { f.queryErr, f.describeErr = context.DeadlineExceeded, down })
	err := <-done
	if !errors.Is(err, ErrTemporalUnreachable) || strings.Contains(err.Error(), "context deadline exceeded") {
		t.Fatalf("err %v", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 3*time.Second {
		t.Fatalf("gave up after %s, bound 300ms", d)
	}
	if len(waits) != 1 || !strings.Contains(waits[0], "cannot reach Temporal for session s1") {
		t.Fatalf("OnWait got %q", waits)
	}

	// No worker, and the prompt is terminated meanwhile.
	f = newFake(&fakeRun{id: "r1", events: evs(1, 2, "")})
	f.queryErr = serviceerror.NewFailedPrecondition("no poller seen for task queue recently, worker may be down")
	go func() {
		_, err := follow(t, fastController(f), "", 0, &recorder{})
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	f.do(func() { f.runs["r1"].status = enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED })
	if err := <-done; !closedAs(err, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED) {
		t.Fatalf("terminated while no worker: %v", err)
	}

	// A query the workflow does not answer is not waited for.
	f = newFake(&fakeRun{id: "r1"})
	f.queryErr = serviceerror.NewQueryFailed("unknown queryType events")
	if _, err := follow(t, fastController(f), "", 0, &recorder{}); err == nil || !strings.Contains(err.Error(), "unknown queryType") {
		t.Fatalf("query failed: %v", err)
	}
}

// Follow of the current run ("") while Temporal does not answer yet: it
// waits (within the bound) for the Describe that pins the run, then
// delivers its events; unreachable for the whole bound, it fails so.
func TestFollow_UnreachableBeforeTheRunIsKnown(t *testing.T) {
	f := newFake(&fakeRun{id: "r1", events: evs(1, 3, agent.EventPromptEnd)})
	f.describeErr = serviceerror.NewUnavailable("connection refused")
	time.AfterFunc(100*time.Millisecond, func() { f.do(func() { f.describeErr = nil }) })
	r := &recorder{}
	if end, err := follow(t, fastController(f), "", 0, r); err != nil || end.Seq != 3 {
		t.Fatalf("Temporal back within the bound: end %+v, err %v", end, err)
	}
	r.checkSeqs(t, 0, 3)

	f = newFake(&fakeRun{id: "r1", events: evs(1, 3, agent.EventPromptEnd)})
	f.describeErr = serviceerror.NewUnavailable("connection refused")
	if _, err := follow(t, fastController(f), "", 0, &recorder{}); !errors.Is(err, ErrTemporalUnreachable) {
		t.Fatalf("Temporal down for the whole bound: %v", err)
	}
}

// closedAs says err is a PromptClosedError of status s.
func closedAs(err error, s enumspb.WorkflowExecutionStatus) bool {
	var ce *PromptClosedError
	return errors.As(err, &ce) && ce.Status == s
}

// sdkQueryPanic is the failure the Temporal frontend returns for an events
// query that hit the SDK's state-machine panic on a worker rebuilding the
// workflow's state after a worker kill (issue 20 item 9; temporalio/sdk-go
// issue 755).
var sdkQueryPanic = serviceerror.NewQueryFailed("[TMPRL1100] invalid state transition: attempt to handleInitiatedEvent, " +
	"CommandType: Activity, ID: 11, state=Created, isDone()=false, history=[Created]")

// Issue 20 item 9: an events query that fails on the worker is transient:
// Follow keeps following through it, says once that it retries, and
// delivers every event once, to the prompt's end. Only failures no retry
// fixes end Follow.
// Spec 13.11.7.
func TestFollow_FailedQueryIsTransient(t *testing.T) {
	// One failed query; failures for longer than the report delay.
	for _, lasting := range []time.Duration{0, 1500 * time.Millisecond} {
		t.Run(fmt.Sprint(lasting), func(t *testing.T) {
			f := newFake(&fakeRun{id: "r1", events: evs(1, 2, "")})
			k := fastController(f)
			var mu sync.Mutex
			var waits []string
			k.OnWait = func(msg string) { mu.Lock(); waits = append(waits, msg); mu.Unlock() }
			r := &recorder{}
			done := make(chan error, 1)
			go func() {
				_, err := follow(t, k, "", 0, r)
				done <- err
			}()
			time.Sleep(30 * time.Millisecond)
			f.do(func() { f.queryErr, f.queries = sdkQueryPanic, 0 })
			for n := 0; n < 1; {
				time.Sleep(time.Millisecond)
				f.do(func() { n = f.queries })
			}
			time.Sleep(lasting)
			f.do(func() {
				f.queryErr = nil
				f.runs["r1"].events = evs(1, 5, agent.EventPromptEnd)
			})
			if err := <-done; err != nil {
				t.Fatalf("Follow ended on a failed query: %v", err)
			}
			r.checkSeqs(t, 0, 5)
			mu.Lock()
			defer mu.Unlock()
			if lasting == 0 && len(waits) != 0 {
				t.Errorf("one failed query was told: %q", waits)
			}
			if lasting > 0 && (len(waits) != 2 || waits[1] != "following session s1 again" ||
				waits[0] != "the events query of session s1 failed on the worker ("+sdkQueryPanic.Error()+"); retrying (the prompt is durable)") {
				t.Errorf("OnWait got %q", waits)
			}
		})
	}
}

// Issue 20 item 9: failures no retry fixes still end Follow at once, with
// the error.
// Spec 13.11.7.
func TestFollow_FinalQueryErrorsEndIt(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{serviceerror.NewQueryFailed("unknown queryType events. KnownQueryTypes=[__stack_trace]"), "unknown queryType events"},
		{serviceerror.NewPermissionDenied("request unauthorized", ""), "request unauthorized"},
		{serviceerror.NewNamespaceNotFound("nowhere"), "nowhere"},
		{serviceerror.NewInvalidArgument("bad query arguments"), "bad query arguments"},
		{serviceerror.NewNotFound("workflow not found"), "no prompt in session s1"},
	} {
		t.Run(fmt.Sprintf("%T", tc.err), func(t *testing.T) {
			f := newFake(&fakeRun{id: "r1", events: evs(1, 2, "")})
			f.queryErr = tc.err
			start := time.Now()
			_, err := follow(t, fastController(f), "", 0, &recorder{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Follow = %v, want an error containing %q", err, tc.want)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("gave up after %s: a final error is not retried", d)
			}
		})
	}
}

// A Describe that fails while the events query answers does not stop
// Follow or make it report an outage.
func TestFollow_DescribeFailingAloneIsNoOutage(t *testing.T) {
	f := newFake(&fakeRun{id: "r1", events: evs(1, 2, "")})
	k := fastController(f)
	var waits []string
	k.OnWait = func(msg string) { waits = append(waits, msg) }
	done := make(chan error, 1)
	r := &recorder{}
	go func() {
		_, err := follow(t, k, "", 0, r)
		done <- err
	}()
	time.Sleep(30 * time.Millisecond)
	f.do(func() { f.describeErr = serviceerror.NewUnavailable("describe is down") })
	time.Sleep(600 * time.Millisecond) // twice fastUnreachable
	f.do(func() { f.runs["r1"].events = evs(1, 4, agent.EventPromptEnd) })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r.checkSeqs(t, 0, 4)
	if len(waits) != 0 {
		t.Fatalf("OnWait got %q", waits)
	}
}

func llmDelta(s string) llm.Delta { return llm.Delta{Type: agent.DeltaText, Delta: s} }
