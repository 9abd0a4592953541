package follow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/codec"
	"github.com/durableagent/durableagent/internal/devserver"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

type env struct {
	t     *testing.T
	c     sdkclient.Client
	cc    *countingClient
	queue string
	w     worker.Worker
}

func newEnv(t *testing.T, opts sdkclient.Options) *env {
	t.Helper()
	c := dial(t, opts)
	e := &env{t: t, c: c, cc: &countingClient{Client: c}, queue: newQueue()}
	e.w = startWorker(t, c, e.queue)
	t.Cleanup(func() {
		if e.w != nil {
			e.w.Stop()
		}
	})
	return e
}

// controller follows the env's workflows.
func (e *env) controller() *client.Controller {
	return &client.Controller{Client: e.cc, TaskQueue: e.queue, QueryTimeout: 2 * time.Second}
}

func (e *env) start(session string, s script, opts ...func(*sdkclient.StartWorkflowOptions)) sdkclient.WorkflowRun {
	e.t.Helper()
	o := sdkclient.StartWorkflowOptions{ID: workflows.WorkflowID(session), TaskQueue: e.queue}
	for _, f := range opts {
		f(&o)
	}
	run, err := e.c.ExecuteWorkflow(context.Background(), o, scriptWorkflowName, s)
	if err != nil {
		e.t.Fatal(err)
	}
	return run
}

type recorder struct {
	mu  sync.Mutex
	evs []agent.Event
}

func (r *recorder) fn(e agent.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evs = append(r.evs, e)
}

func (r *recorder) workflowEvents() []agent.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []agent.Event
	for _, e := range r.evs {
		if !live.IsLive(e) {
			out = append(out, e)
		}
	}
	return out
}

func (r *recorder) checkSeqs(t *testing.T, after, last int64) {
	t.Helper()
	want := after + 1
	var got []int64
	for _, e := range r.workflowEvents() {
		got = append(got, e.Seq)
		if e.Seq != want {
			t.Fatalf("seqs %v: want %d next", got, want)
		}
		want++
	}
	if want != last+1 {
		t.Fatalf("seqs %v: want up to %d", got, last)
	}
}

func follow(ctx context.Context, k *client.Controller, session, runID string, after int64, r *recorder) (agent.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return k.Follow(ctx, session, runID, after, r.fn)
}

// Item 3: a prompt that continues as new is followed across the runs with
// no gap and no repeat, including the events emitted right before the
// continue-as-new (only a query of the closed run shows them); a late
// follower from seq 0 starts in the first run.
func TestFollow_AcrossContinueAsNew(t *testing.T) {
	e := newEnv(t, sdkclient.Options{})
	// 1 agent_start, turns 1..2 (+turn_end 2) in run 1; turns 3..4 and
	// prompt_end in run 2: 7 events.
	run := e.start("can", script{Turns: 4, SleepMs: 300, ContinueAfter: 2})
	r := &recorder{}
	end, err := follow(context.Background(), e.controller(), "can", run.GetRunID(), 0, r)
	if err != nil || end.Type != agent.EventPromptEnd {
		t.Fatalf("end %+v err %v", end, err)
	}
	r.checkSeqs(t, 0, 7)
	if evs := r.workflowEvents(); evs[3].Type != agent.EventTurnEnd {
		t.Fatalf("event 4 is %s, want the turn_end emitted with the continue-as-new", evs[3].Type)
	}

	for _, after := range []int64{0, 2, 4, 6} {
		r := &recorder{}
		start := time.Now()
		end, err := follow(context.Background(), e.controller(), "can", "", after, r)
		if err != nil || end.Seq != 7 {
			t.Fatalf("late follow after %d: end %+v err %v", after, end, err)
		}
		r.checkSeqs(t, after, 7)
		t.Logf("late follow of an ended, continued prompt after seq %d: %s", after, time.Since(start).Round(time.Millisecond))
	}
	// Past the end: at once, with the prompt_end.
	start := time.Now()
	r = &recorder{}
	end, err = follow(context.Background(), e.controller(), "can", "", 7, r)
	if err != nil || end.Type != agent.EventPromptEnd || len(r.evs) != 0 || time.Since(start) > 5*time.Second {
		t.Fatalf("after the end: %+v %v, delivered %d, took %s", end, err, len(r.evs), time.Since(start))
	}
}

// Item 4: terminate and run timeout end Follow with the status, without
// prompt_end; `--after N` past the end of a terminated prompt returns at
// once.
func TestFollow_TerminatedAndTimedOut(t *testing.T) {
	e := newEnv(t, sdkclient.Options{})
	run := e.start("term", script{Turns: 1, SleepMs: 10, Wait: true})
	r := &recorder{}
	done := make(chan error, 1)
	go func() {
		_, err := follow(context.Background(), e.controller(), "term", "", 0, r)
		done <- err
	}()
	time.Sleep(1500 * time.Millisecond)
	if err := e.c.TerminateWorkflow(context.Background(), run.GetID(), "", "test terminates"); err != nil {
		t.Fatal(err)
	}
	terminated := time.Now()
	err := <-done
	noticed := time.Since(terminated)
	want := fmt.Sprintf("prompt in session term was terminated (workflow session-term run %s)", run.GetRunID())
	if !closedAs(err, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED) || err.Error() != want {
		t.Fatalf("err %v, want %q", err, want)
	}
	if noticed > 3*time.Second {
		t.Fatalf("terminate noticed after %s", noticed)
	}
	t.Logf("terminate noticed after %s", noticed.Round(time.Millisecond))
	r.checkSeqs(t, 0, 2)

	start := time.Now()
	if _, err := follow(context.Background(), e.controller(), "term", "", 5, &recorder{}); !closedAs(err, enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED) || time.Since(start) > 5*time.Second {
		t.Fatalf("after the end of a terminated prompt: %v after %s", err, time.Since(start))
	}

	e.start("timeout", script{Wait: true}, func(o *sdkclient.StartWorkflowOptions) { o.WorkflowRunTimeout = 2 * time.Second })
	r = &recorder{}
	if _, err := follow(context.Background(), e.controller(), "timeout", "", 0, r); !closedAs(err, enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT) ||
		!strings.Contains(err.Error(), "prompt in session timeout timed out") {
		t.Fatalf("timed out: %v", err)
	}
	r.checkSeqs(t, 0, 1)
}

// Item 5: the worker goes away mid-prompt and comes back: Follow waits,
// says so once and once when it resumes, and delivers every event.
func TestFollow_WorkerOutage(t *testing.T) {
	e := newEnv(t, sdkclient.Options{})
	e.start("outage", script{Turns: 6, SleepMs: 700})
	k := e.controller()
	k.QueryTimeout = time.Second
	var mu sync.Mutex
	var waits []string
	k.OnWait = func(msg string) {
		mu.Lock()
		waits = append(waits, msg)
		mu.Unlock()
	}
	r := &recorder{}
	done := make(chan error, 1)
	go func() {
		_, err := follow(context.Background(), k, "outage", "", 0, r)
		done <- err
	}()
	time.Sleep(1200 * time.Millisecond)
	e.w.Stop()
	time.Sleep(5 * time.Second)
	e.w = startWorker(t, e.c, e.queue)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r.checkSeqs(t, 0, 8)
	mu.Lock()
	defer mu.Unlock()
	if len(waits) != 2 || !strings.HasPrefix(waits[0], "no worker is answering for session outage") || waits[1] != "following session outage again" {
		t.Fatalf("OnWait: %q", waits)
	}
}

// measured follows one prompt and records when its phases start.
type measured struct {
	mu          sync.Mutex
	cc          *countingClient
	evs         []agent.Event
	marks       map[string]time.Time
	callsAtMark map[string]int64
}

func (m *measured) fn(e agent.Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.evs = append(m.evs, e)
	if live.IsLive(e) {
		return
	}
	key := e.Type
	if e.Type == agent.EventTurnStart {
		key = fmt.Sprintf("turn_start %d", e.Turn)
	}
	m.marks[key] = time.Now()
	m.callsAtMark[key] = m.cc.describes.Load()
}

func (m *measured) rate(from, to string) (float64, time.Duration) {
	d := m.marks[to].Sub(m.marks[from])
	n := m.callsAtMark[to] - m.callsAtMark[from]
	return float64(n) / d.Seconds(), d
}

// Item 2: the live text of a model call arrives as message_update deltas
// between message_start and message_end, and adds up to the message (the
// last words come right before message_end); the Describe cost is
// measured while it streams (about one per poll: the heartbeat fallback
// reads at a fixed interval) and while nothing runs.
func TestFollow_LiveOutputAndDescribeCost(t *testing.T) {
	e := newEnv(t, sdkclient.Options{})
	pieces, final := wordPieces(40)
	// agent_start, three idle turns 1 s apart (nothing runs: only a
	// durable timer), message_start, a 2 s model call, message_end,
	// prompt_end.
	e.start("live", script{Turns: 3, SleepMs: 1000, Stream: pieces, PieceMs: 50})
	m := &measured{cc: e.cc, marks: map[string]time.Time{}, callsAtMark: map[string]int64{}}
	k := e.controller()
	end, err := k.Follow(context.Background(), "live", "", 0, m.fn)
	if err != nil || end.Type != agent.EventPromptEnd {
		t.Fatalf("end %+v err %v", end, err)
	}
	var got strings.Builder
	state := "before"
	nLive := 0
	for _, ev := range m.evs {
		switch {
		case ev.Type == agent.EventMessageStart:
			state = "streaming"
		case ev.Type == agent.EventMessageEnd:
			state = "after"
		case live.IsLive(ev):
			nLive++
			if state != "streaming" || ev.EntryID != "a1" || ev.Seq != 5 || ev.AssistantMessageEvent.Type != "text_delta" {
				t.Fatalf("live event %+v while %s", ev, state)
			}
			got.WriteString(ev.AssistantMessageEvent.Delta)
		}
	}
	if nLive < 3 {
		t.Fatalf("%d live events for a 2 s stream", nLive)
	}
	if got.String() != final {
		t.Fatalf("deltas %q\ndo not add up to %q", got.String(), final)
	}
	idle, idleD := m.rate("turn_start 1", "turn_start 3")
	streaming, streamD := m.rate(agent.EventMessageStart, agent.EventMessageEnd)
	avg := e.cc.avg()
	t.Logf("Describe per follower: %.1f/s idle (over %s), %.1f/s while a model call streams (over %s); %d calls, %s each on average; %d live events, %d of %d bytes",
		idle, idleD.Round(time.Millisecond), streaming, streamD.Round(time.Millisecond), e.cc.describes.Load(), avg.Round(time.Microsecond), nLive, got.Len(), len(final))
	if idle > 2.5 {
		t.Errorf("idle: %.1f Describe/s, want about 1", idle)
	}
	// The follower reads the heartbeats every poll (100 ms) plus its
	// RPCs: about 9 a second.
	if streaming < 4 || streaming > 16 {
		t.Errorf("streaming: %.1f Describe/s, want about one per poll (~9/s)", streaming)
	}
}

// With a payload codec, live output is read only with the client's data
// converter (Controller.DataConverter); without it the snapshots are
// skipped, and the workflow events still arrive.
func TestFollow_LiveOutputWithCodec(t *testing.T) {
	key, err := codec.NewKey("follow-test", bytes.Repeat([]byte{7}, codec.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	dc := codec.New(key).DataConverter()
	e := newEnv(t, sdkclient.Options{DataConverter: dc})
	pieces := []string{"secret ", "text ", "streams ", "encrypted ", "through ", "heartbeats"}
	for _, c := range []struct {
		session  string
		withDC   bool
		wantLive bool
	}{{"codec-off", false, false}, {"codec-on", true, true}} {
		e.start(c.session, script{Stream: append(pieces, pieces...), PieceMs: 150})
		k := e.controller()
		if c.withDC {
			k.DataConverter = dc
		}
		r := &recorder{}
		if _, err := follow(context.Background(), k, c.session, "", 0, r); err != nil {
			t.Fatal(err)
		}
		r.checkSeqs(t, 0, 4)
		if live := len(r.evs) - len(r.workflowEvents()); (live > 0) != c.wantLive {
			t.Fatalf("%s: %d live events", c.session, live)
		}
	}
}

// The product's CallModel with the payload codec on (client.Dial, app.NewWorker,
// client.NewController with codec.keyFile): the heartbeat details a Describe
// returns while the call streams are sealed (encoding binary/encrypted,
// the key id, no plaintext); client.NewController's controller streams the
// answer; one on the same client but without the codec's data converter
// (Describe returns the details undecoded, unlike a query's result) says
// once through OnWait that it cannot decode the live output, and still
// gets every workflow event.
func TestFollow_CallModelHeartbeatIsEncrypted(t *testing.T) {
	srv := server(t)
	const reply = "sealed words stream through heartbeats that only the key holder can read today"
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "codec.key")
	if err := os.WriteFile(keyFile, bytes.Repeat([]byte{9}, codec.KeySize), 0o600); err != nil {
		t.Fatal(err)
	}
	s := settings.Defaults()
	s.DataDir = dir
	s.Temporal.Address, s.Temporal.Namespace, s.Temporal.TaskQueue = srv.FrontendAddress(), devserver.DefaultNamespace, newQueue()
	s.Codec.KeyFile = keyFile
	s.Scripted.Reply, s.Scripted.StreamDelayMs, s.Scripted.LatencyMs = reply, 200, 0
	s.Tools.Placement = settings.ToolPlacementAny
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wc, err := client.Dial(ctx, s, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	w, err := app.NewWorker(wc, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	withKey, err := client.NewController(wc, s)
	if err != nil || withKey.DataConverter == nil {
		t.Fatalf("controller with the codec: %v", err)
	}
	raw := dial(t, sdkclient.Options{})
	noKey := &client.Controller{Client: wc, TaskQueue: s.Temporal.TaskQueue}
	var waitsMu sync.Mutex
	var waits []string
	noKey.OnWait = func(msg string) {
		waitsMu.Lock()
		waits = append(waits, msg)
		waitsMu.Unlock()
	}
	run, err := withKey.StartPrompt(ctx, client.PromptInput(s, "sealed", "hello"))
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		r   *recorder
		err error
	}
	results := make(chan result, 2)
	for _, k := range []*client.Controller{withKey, noKey} {
		go func() {
			r := &recorder{}
			_, err := follow(ctx, k, "sealed", run.GetRunID(), 0, r)
			results <- result{r, err}
		}()
	}

	// Describe, with no codec, while the call streams.
	var sealed bool
	for !sealed && ctx.Err() == nil {
		resp, err := raw.DescribeWorkflowExecution(ctx, run.GetID(), run.GetRunID())
		if err != nil {
			t.Fatal(err)
		}
		for _, pa := range resp.GetPendingActivities() {
			ps := pa.GetHeartbeatDetails().GetPayloads()
			if pa.GetActivityType().GetName() != activities.CallModelName || len(ps) == 0 || pa.GetLastHeartbeatTime().AsTime().Before(pa.GetLastStartedTime().AsTime().Add(300*time.Millisecond)) {
				continue
			}
			p := ps[0]
			if enc := string(p.GetMetadata()[converter.MetadataEncoding]); enc != codec.EncodingEncrypted {
				t.Fatalf("CallModel heartbeat details have encoding %q, want %q", enc, codec.EncodingEncrypted)
			}
			if id := string(p.GetMetadata()[codec.MetadataKeyID]); id != s.Codec.KeyID {
				t.Fatalf("key id %q, want %q", id, s.Codec.KeyID)
			}
			if bytes.Contains(p.GetData(), []byte("sealed words")) || bytes.Contains(p.GetData(), []byte(`"entryId"`)) {
				t.Fatal("the heartbeat details hold plaintext")
			}
			sealed = true
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !sealed {
		t.Fatal("never saw the streaming CallModel's heartbeat")
	}
	for range 2 {
		res := <-results
		if res.err != nil {
			t.Fatal(res.err)
		}
		var text strings.Builder
		for _, e := range res.r.evs {
			if e.Type == agent.EventMessageUpdate {
				text.WriteString(e.AssistantMessageEvent.Delta)
			}
		}
		live := len(res.r.evs) - len(res.r.workflowEvents())
		if live > 0 && text.String() != reply {
			t.Fatalf("with the key: deltas %q, want the reply", text.String())
		}
		if live == 0 && len(res.r.workflowEvents()) < 5 {
			t.Fatalf("without the key: only %d workflow events", len(res.r.workflowEvents()))
		}
	}
	waitsMu.Lock()
	defer waitsMu.Unlock()
	n := 0
	for _, w := range waits {
		if strings.Contains(w, "cannot decode the live output of session sealed") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("OnWait without the key: %q, want the decode failure told once", waits)
	}
}

// wordPieces is a model answer streamed as n pieces ("word0 ", "word1 ",
// ...) and the text they add up to.
func wordPieces(n int) ([]string, string) {
	pieces := make([]string, n)
	for i := range pieces {
		pieces[i] = fmt.Sprintf("word%d ", i)
	}
	return pieces, strings.Join(pieces, "")
}

// closedAs says err is a client.PromptClosedError of status s.
func closedAs(err error, s enumspb.WorkflowExecutionStatus) bool {
	var ce *client.PromptClosedError
	return errors.As(err, &ce) && ce.Status == s
}
