package main

// The stream benchmark: live output through heartbeat details (SPEC
// 13.10.5). The worker is the product's (app.NewActivities, app.Register,
// app.WorkerOptions) with one bench-only change: the scripted provider is
// wrapped by tapProvider, which stamps every delta as it leaves the
// provider and appends the stamps to a file in the worker's data dir.
// Every prompt is run by a `starter rpc` process of its own (this binary
// re-executed as the starter, see runStarterIfAsked), as an RPC client
// would run it: the bench sends the prompt command on its stdin and stamps
// every message_update line as it reads it from its stdout. Both stamps
// are the wall clock of the same machine. The starters reach the server
// through a counting gRPC proxy (their Describe and query RPCs), a gRPC
// interceptor on the worker's client counts its heartbeat RPCs, and their
// CPU is read from /proc apart from the bench process's (the embedded
// server). Variants may follow in this process with client.Follow.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/grpc"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/codec"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/rpc"
	"github.com/durableagent/durableagent/workflows"
)

const (
	// streamTaskQueue is the stream scenario's task queue; a child worker
	// on it (or on a variant's, see streamQueue) is the tapped one (see
	// dialChild, newChildWorker).
	streamTaskQueue = "bench-stream"
	// Session id prefixes, of equal length so the ids cost the same
	// history bytes: the tap hands a 1ch session's answer to the
	// accumulator as one delta, an nch session's word by word.
	oneChunkPrefix  = "stream-1ch-"
	manyChunkPrefix = "stream-nch-"
	// The workflow-streams alternative: a bench-only workflow that
	// receives each delta as a signal.
	streamSignalsWorkflowName = "BenchStreamSignals"
	streamSignalName          = "bench_stream_delta"
	// streamTargetP95Ms is issue 11's delay target.
	streamTargetP95Ms = 300
)

// StreamLevel is N prompts streaming at once, each followed.
type StreamLevel struct {
	N     int `json:"n"`
	Calls int `json:"calls"`
	// Via is how the prompts were followed: "rpc" (a `starter rpc`
	// process each; the delay ends when the bench reads the line) or
	// "follow" (client.Follow in the bench process; the delay ends at
	// its callback).
	Via string `json:"via"`
	// Delay is from a delta leaving the provider to the client receiving
	// its last byte (in a message_update, or in the message_end when no
	// snapshot carried it: ViaEnd of Deltas).
	Delay  Dist `json:"delay"`
	Deltas int  `json:"deltas"`
	ViaEnd int  `json:"viaMessageEnd"`
	// LiveDelay and EndDelay split Delay: the deltas that came in a
	// message_update, and those that came only with message_end.
	LiveDelay Dist `json:"liveDelay"`
	EndDelay  Dist `json:"endDelay"`
	// LiveBytes of TextBytes arrived as message_update.
	LiveBytes int `json:"liveBytes"`
	TextBytes int `json:"textBytes"`
	// CallSec is the mean time a call streamed (provider start to end).
	CallSec float64 `json:"callSec"`
	// HeartbeatsPerSec is heartbeat RPCs per second per streaming call;
	// DescribesPerSec and QueriesPerSec are per follower.
	HeartbeatsPerSec float64 `json:"heartbeatsPerSec"`
	DescribesPerSec  float64 `json:"describesPerSec"`
	QueriesPerSec    float64 `json:"queriesPerSec"`
	// ServerCores is the bench process's CPU time over the wall time: the
	// embedded server, the counting proxy and the reading of the lines
	// (via rpc), or the server and the followers (via follow).
	// FollowerCores is the `starter rpc` processes' (via rpc), in all;
	// WorkerCores the worker process's.
	ServerCores   float64 `json:"serverCores"`
	FollowerCores float64 `json:"followerCores"`
	WorkerCores   float64 `json:"workerCores"`
	WallSec       float64 `json:"wallSec"`
	// Error says why the level did not complete (its prompts did not all
	// end with the answer): it broke the target.
	Error string `json:"error,omitempty"`
}

// StreamHistory is what the prompts of one chunking cost in history.
type StreamHistory struct {
	Chunks       int   `json:"chunks"`
	Prompts      int   `json:"prompts"`
	Events       []int `json:"events"`
	BytesPerCall []int `json:"bytesPerCall"`
	// MeanBytesPerCall is the mean of BytesPerCall.
	MeanBytesPerCall float64 `json:"meanBytesPerCall"`
}

// StreamSignals is the alternative design: each delta of one answer a
// signal into a running workflow.
type StreamSignals struct {
	Signals       int `json:"signals"`
	Bytes         int `json:"bytes"`
	BaseBytes     int `json:"baseBytes"`
	Events        int `json:"events"`
	WorkflowTasks int `json:"workflowTasks"`
	// AddedBytes is Bytes - BaseBytes (the same workflow with no signal):
	// what the deltas add to the history of a call.
	AddedBytes int `json:"addedBytes"`
	// PerCallBytes is the heartbeat design's bytes per call plus
	// AddedBytes; Ratio is PerCallBytes over the heartbeat design's.
	PerCallBytes float64 `json:"perCallBytes"`
	Ratio        float64 `json:"ratio"`
}

// StreamResult is the cost and the delay of live output.
type StreamResult struct {
	IntervalMs    int64 `json:"intervalMs"`
	PollMs        int64 `json:"pollMs"`
	StreamDelayMs int64 `json:"streamDelayMs"`
	AnswerBytes   int   `json:"answerBytes"`
	// One and Many are the same answer streamed as 1 and as Many.Chunks
	// deltas; HistoryRatio is Many's mean bytes per call over One's.
	One          StreamHistory `json:"one"`
	Many         StreamHistory `json:"many"`
	HistoryRatio float64       `json:"historyRatio"`
	// TappedDeltas are the deltas the tap saw per call, 1ch calls first.
	TappedDeltas []int         `json:"tappedDeltas"`
	Levels       []StreamLevel `json:"levels"`
	// Sustained is the largest N of the sweep up to which every level met
	// the p95 target; BrokeAt the first N that missed it (0: none).
	Sustained int `json:"sustained"`
	BrokeAt   int `json:"brokeAt"`
	// IdleServerCores and IdleWorkerCores are the CPU use with nothing
	// running.
	IdleServerCores float64       `json:"idleServerCores"`
	IdleWorkerCores float64       `json:"idleWorkerCores"`
	Signals         StreamSignals `json:"signals"`
	// Variants are other configurations, each streaming alone.
	Variants []StreamVariantResult `json:"variants,omitempty"`
}

// streamPieces are the deltas of an answer of n bytes in k words: the
// first a word, each later one a space and a word, as the scripted
// provider splits text (they join to the answer).
func streamPieces(n, k int) []string {
	pieces := make([]string, k)
	const letters = "abcdefghijklmnopqrstuvwxyz"
	for i := range pieces {
		size := n / k
		if i < n%k {
			size++
		}
		word := "w" + strconv.Itoa(i) + strings.Repeat(letters, 1+size/len(letters))
		if i > 0 {
			word = " " + word
		}
		pieces[i] = word[:size]
	}
	return pieces
}

// StreamVariant is a configuration of the stream path measured beside
// the one as built (zero fields: as built).
type StreamVariant struct {
	Name string `json:"name"`
	// IntervalMs is stream.intervalMs: the worker's heartbeat throttle and
	// the period the follower expects between heartbeats.
	IntervalMs int64 `json:"intervalMs,omitempty"`
	// InProcess follows with client.Follow in the bench process instead
	// of a `starter rpc` process per prompt.
	InProcess bool `json:"inProcess,omitempty"`
	// FixedReadMs (in process) reads the live output at this fixed
	// interval instead of just after each heartbeat lands: the follower's
	// poll interval (its events query follows it too; 100 is the
	// default's), with the heartbeat times hidden from it
	// (hideHeartbeatTimes).
	FixedReadMs int64 `json:"fixedReadMs,omitempty"`
	// Sweep: also run the concurrency sweep (StreamConcurrency).
	Sweep bool `json:"sweep,omitempty"`
}

// StreamVariantResult is one variant streaming alone.
type StreamVariantResult struct {
	StreamVariant
	Level StreamLevel `json:"level"`
	// Sweep are the levels of the concurrency sweep, if run.
	SweepLevels []StreamLevel `json:"sweepLevels,omitempty"`
}

// streamBench runs the stream benchmark on a worker whose scripted model
// answers StreamAnswerBytes in StreamChunks words at StreamDelayMs per
// word, with the default stream interval, then the variants.
func (h *harness) streamBench(ctx context.Context) (*StreamResult, error) {
	n, k := h.cfg.StreamAnswerBytes, h.cfg.StreamChunks
	if k < 2 || n < 2*k {
		return nil, fmt.Errorf("stream: want at least 2 chunks of 2 bytes, have %d bytes in %d", n, k)
	}
	pieces := streamPieces(n, k)
	answer := strings.Join(pieces, "")
	s := h.streamSettings("stream", answer)
	res := &StreamResult{IntervalMs: app.StreamInterval(s).Milliseconds(), PollMs: abortPoll.Milliseconds(),
		StreamDelayMs: s.Scripted.StreamDelayMs, AnswerBytes: len(answer)}
	err := h.withStreamWorker(ctx, s, StreamVariant{}, func(sb *streamBatch) error {
		return sb.main(ctx, res, pieces)
	})
	if err != nil {
		return nil, err
	}
	for _, v := range h.cfg.StreamVariants {
		vs := s
		if v.IntervalMs > 0 {
			vs.Stream.IntervalMs = v.IntervalMs
		}
		err := h.withStreamWorker(ctx, vs, v, func(sb *streamBatch) error {
			var calls []streamCall
			var use usage
			for r := 0; r < max(h.cfg.StreamRuns, 1); r++ {
				c, err := sb.run(ctx, fmt.Sprintf("%s%s-%02d", manyChunkPrefix, v.Name, r), 1)
				if err != nil {
					return err
				}
				calls = append(calls, c...)
				use.add(sb.last)
			}
			l := sb.level(1, calls, use)
			h.logf("stream: variant %s: delay p50 %.0f ms p95 %.0f ms, %.1f heartbeats/s per call, %.1f Describe/s, %.1f queries/s",
				v.Name, l.Delay.P50, l.Delay.P95, l.HeartbeatsPerSec, l.DescribesPerSec, l.QueriesPerSec)
			vr := StreamVariantResult{StreamVariant: v, Level: l}
			for _, n := range h.cfg.StreamConcurrency {
				if !v.Sweep {
					break
				}
				calls, err := sb.run(ctx, fmt.Sprintf("%s%s-%02d", manyChunkPrefix, v.Name, n), n)
				if err != nil {
					h.logf("stream: variant %s: N=%d failed: %v", v.Name, n, err)
					vr.SweepLevels = append(vr.SweepLevels, StreamLevel{N: n, Calls: n, Via: "follow", Error: err.Error()})
					break
				}
				lv := sb.level(n, calls, sb.last)
				h.logf("stream: variant %s: N=%d delay p50 %.0f ms p95 %.0f ms, server %.2f cores, followers %.2f, worker %.2f",
					v.Name, n, lv.Delay.P50, lv.Delay.P95, lv.ServerCores, lv.FollowerCores, lv.WorkerCores)
				vr.SweepLevels = append(vr.SweepLevels, lv)
			}
			res.Variants = append(res.Variants, vr)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("stream variant %s: %w", v.Name, err)
		}
	}
	return res, nil
}

// streamSettings are the settings of a stream scenario whose scripted
// model answers answer.
func (h *harness) streamSettings(name, answer string) settings.Settings {
	s := h.scenario(name)
	s.Scripted.Reply = answer
	// The other benchmarks run the scripted model without pauses; this
	// one streams at the configured pace, or the setting's default.
	s.Scripted.StreamDelayMs = settings.Defaults().Scripted.StreamDelayMs
	if h.cfg.StreamDelayMs > 0 {
		s.Scripted.StreamDelayMs = h.cfg.StreamDelayMs
	}
	s.Scripted.LatencyMs = 0
	s.Compaction.Enabled = false
	s.Tools.Placement = settings.ToolPlacementAny
	return s
}

// streamQueue is the task queue of a stream worker with stream interval
// intervalMs (0: as built): the child knows a stream worker by the prefix.
func streamQueue(intervalMs int64) string {
	if intervalMs <= 0 {
		return streamTaskQueue
	}
	return fmt.Sprintf("%s-i%d", streamTaskQueue, intervalMs)
}

// withStreamWorker runs fn on a tapped worker of settings s in variant v,
// with followers on a client of their own (in process) or `starter rpc`
// processes behind a counting proxy.
func (h *harness) withStreamWorker(ctx context.Context, s settings.Settings, v StreamVariant, fn func(*streamBatch) error) error {
	s.Temporal.TaskQueue = streamQueue(v.IntervalMs)
	tap := tapFile(s)
	_ = os.Remove(tap)
	w, err := startChild(ctx, s)
	if err != nil {
		return err
	}
	defer w.stop()
	sb := &streamBatch{h: h, s: s, rpcs: &rpcCounter{}, worker: w, tap: tap, answer: s.Scripted.Reply, inProcess: v.InProcess}
	if v.InProcess {
		fc, err := dialCounting(ctx, s, sb.rpcs)
		if err != nil {
			return err
		}
		defer fc.Close()
		if sb.k, err = client.NewController(fc, s); err != nil {
			return err
		}
		// As h.controller's: a follower that waits says so in the log.
		sb.k.OnWait = func(msg string) { h.logf("follow: %s", msg) }
	} else {
		if sb.proxy, err = startCountingProxy(s.Temporal.Address, sb.rpcs); err != nil {
			return err
		}
		defer sb.proxy.Close()
	}
	return fn(sb)
}

// main measures the history of 1 vs many chunks, the delay and cost at N=1
// and the sweep, and the signals alternative.
func (sb *streamBatch) main(ctx context.Context, res *StreamResult, pieces []string) error {
	h, k := sb.h, len(pieces)
	if _, err := sb.run(ctx, oneChunkPrefix+"warmup", 1); err != nil {
		return err
	}
	res.IdleServerCores, res.IdleWorkerCores = sb.idle(ctx, h.cfg.StreamIdle)

	// History: the same answer in one delta and in k, alternating.
	res.One, res.Many = StreamHistory{Chunks: 1}, StreamHistory{Chunks: k}
	var manyCalls []streamCall
	var manyUse usage
	for r := 0; r < max(h.cfg.StreamRuns, 1); r++ {
		for _, hist := range []*StreamHistory{&res.One, &res.Many} {
			prefix := oneChunkPrefix
			if hist.Chunks > 1 {
				prefix = manyChunkPrefix
			}
			calls, err := sb.run(ctx, fmt.Sprintf("%s%02d-%02d", prefix, 1, r), 1)
			if err != nil {
				return err
			}
			c := calls[0]
			if hist.Chunks > 1 {
				manyCalls = append(manyCalls, c)
				manyUse.add(sb.last)
			}
			hist.Prompts++
			hist.Events = append(hist.Events, c.events)
			hist.BytesPerCall = append(hist.BytesPerCall, c.bytesPerCall)
			res.TappedDeltas = append(res.TappedDeltas, len(c.tap.Ends))
		}
	}
	res.One.MeanBytesPerCall = meanInts(res.One.BytesPerCall)
	res.Many.MeanBytesPerCall = meanInts(res.Many.BytesPerCall)
	res.HistoryRatio = res.Many.MeanBytesPerCall / res.One.MeanBytesPerCall
	for i, d := range res.TappedDeltas {
		if want := []int{1, k}[i%2]; d != want {
			return fmt.Errorf("stream: the tap saw %d deltas in call %d, want %d", d, i, want)
		}
	}
	h.logf("stream: history per call 1 chunk %.0f B, %d chunks %.0f B = %.4fx",
		res.One.MeanBytesPerCall, k, res.Many.MeanBytesPerCall, res.HistoryRatio)

	// Delay and cost: the N=1 calls above, then N at once.
	res.Levels = append(res.Levels, sb.level(1, manyCalls, manyUse))
	for _, n := range h.cfg.StreamConcurrency {
		calls, err := sb.run(ctx, fmt.Sprintf("%s%02d", manyChunkPrefix, n), n)
		if err != nil {
			// A level whose prompts do not all complete with the answer
			// (a model call timed out under the load) broke the target;
			// the sweep stops there.
			h.logf("stream: N=%d failed: %v", n, err)
			res.Levels = append(res.Levels, StreamLevel{N: n, Calls: n, Via: "rpc", Error: err.Error()})
			break
		}
		res.Levels = append(res.Levels, sb.level(n, calls, sb.last))
	}
	for _, l := range res.Levels {
		h.logf("stream: N=%d delay p50 %.0f ms p95 %.0f ms (%d deltas, %d via message_end), %.1f heartbeats/s per call, server %.2f cores, followers %.2f, worker %.2f",
			l.N, l.Delay.P50, l.Delay.P95, l.Deltas, l.ViaEnd, l.HeartbeatsPerSec, l.ServerCores, l.FollowerCores, l.WorkerCores)
		if res.BrokeAt == 0 && l.Error == "" && l.Delay.P95 <= streamTargetP95Ms {
			res.Sustained = l.N
		} else if res.BrokeAt == 0 {
			res.BrokeAt = l.N
		}
	}

	var err error
	if res.Signals, err = sb.signals(ctx, pieces[:min(h.cfg.StreamSignals, len(pieces))]); err != nil {
		return err
	}
	sg := &res.Signals
	sg.PerCallBytes = res.Many.MeanBytesPerCall + float64(sg.AddedBytes)
	sg.Ratio = sg.PerCallBytes / res.Many.MeanBytesPerCall
	h.logf("stream: %d deltas as signals add %d B of history (%d workflow tasks)", sg.Signals, sg.AddedBytes, sg.WorkflowTasks)
	return nil
}

// streamBatch runs followed prompts on the stream worker.
type streamBatch struct {
	h      *harness
	s      settings.Settings
	rpcs   *rpcCounter
	worker *child
	tap    string
	answer string
	// inProcess follows with k; otherwise each prompt has a `starter rpc`
	// process, dialling proxy.
	inProcess bool
	k         *client.Controller
	proxy     *countingProxy
	// last is the resource use of the latest run.
	last usage
}

// usage is what a batch of prompts cost.
type usage struct {
	wall, server, worker, followers time.Duration
	rpcs                            map[string]int
}

func (u *usage) add(v usage) {
	u.wall += v.wall
	u.server += v.server
	u.worker += v.worker
	u.followers += v.followers
	if u.rpcs == nil {
		u.rpcs = map[string]int{}
	}
	for m, n := range v.rpcs {
		u.rpcs[m] += n
	}
}

// streamCall is one followed prompt.
type streamCall struct {
	session      string
	tap          tapRecord
	live         []liveMark
	liveText     string
	final        string
	endAt        time.Time
	events       int
	bytesPerCall int
	// followerCPU is the CPU its `starter rpc` process used while the
	// prompt ran (via rpc).
	followerCPU time.Duration
	// endReason is the last assistant message_end's stop reason and error.
	endReason string
	// slowTasks: the history's tasks that waited long to start.
	slowTasks []string
	// closedAt: when the prompt's workflow closed (its last event).
	closedAt time.Time
}

// liveMark: the follower had End bytes of the text at At.
type liveMark struct {
	end int
	at  time.Time
}

// run starts n prompts at once in sessions prefix-0..n-1 (prefix itself
// when n is 1 and it names a session), follows each until prompt_end,
// and checks each: completed, one model call, the live text a prefix of
// the final text, which is the answer.
func (b *streamBatch) run(ctx context.Context, prefix string, n int) ([]streamCall, error) {
	calls := make([]streamCall, n)
	for i := range calls {
		calls[i].session = prefix
		if n > 1 {
			calls[i].session = fmt.Sprintf("%s-%02d", prefix, i)
		}
	}
	before := b.rpcs.snapshot()
	server0, worker0, t0 := selfCPU(), procCPU(b.worker.cmd.Process.Pid), time.Now()
	err := parallel(n, n, func(i int) error { return b.follow(ctx, &calls[i]) })
	b.last = usage{wall: time.Since(t0), server: selfCPU() - server0,
		worker: procCPU(b.worker.cmd.Process.Pid) - worker0, rpcs: b.rpcs.since(before)}
	if err != nil {
		return nil, err
	}
	for _, c := range calls {
		b.last.followers += c.followerCPU
	}
	taps, err := readTap(b.tap)
	if err != nil {
		return nil, err
	}
	for i := range calls {
		c := &calls[i]
		rec, ok := taps[c.session]
		if !ok {
			return nil, fmt.Errorf("stream: the tap has no call of session %s", c.session)
		}
		c.tap = rec
	}
	return calls, nil
}

// follow runs and follows one prompt.
func (b *streamBatch) follow(ctx context.Context, c *streamCall) error {
	var live strings.Builder
	on := func(e agent.Event) {
		now := time.Now()
		switch {
		case e.Type == agent.EventMessageUpdate && e.AssistantMessageEvent != nil &&
			e.AssistantMessageEvent.Type == agent.DeltaText:
			live.WriteString(e.AssistantMessageEvent.Delta)
			c.live = append(c.live, liveMark{end: live.Len(), at: now})
		case e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleAssistant:
			c.final, c.endAt = e.Message.Text(), now
			c.endReason = string(e.Message.StopReason)
			if e.Message.ErrorMessage != "" {
				c.endReason += ": " + e.Message.ErrorMessage
			}
		}
	}
	var run sdkclient.WorkflowRun
	var err error
	if b.inProcess {
		run, err = b.followInProcess(ctx, c, on)
	} else {
		run, err = b.followRPC(ctx, c, on)
	}
	if err != nil {
		return err
	}
	c.liveText = live.String()
	switch {
	case c.final != b.answer:
		return fmt.Errorf("stream: session %s: message_end has %d bytes (%s), want the %d-byte answer",
			c.session, len(c.final), c.endReason, len(b.answer))
	case c.liveText != "" && c.liveText != c.final:
		return fmt.Errorf("stream: session %s: the message_update deltas (%d bytes) do not add up to the final text (%d bytes)",
			c.session, len(c.liveText), len(c.final))
	}
	evs, err := b.h.history(ctx, run)
	if err != nil {
		return err
	}
	calls := 0
	for _, ev := range evs {
		if ev.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
			ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == activities.CallModelName {
			calls++
		}
	}
	if calls != 1 {
		return fmt.Errorf("stream: session %s made %d model calls, want 1", c.session, calls)
	}
	c.events, c.bytesPerCall = len(evs), historyBytes(evs)
	c.slowTasks = slowTaskStarts(evs)
	if len(evs) > 0 {
		c.closedAt = evs[len(evs)-1].GetEventTime().AsTime()
	}
	return nil
}

// slowTaskStarts lists the workflow and activity tasks of a history that
// waited more than a second between scheduled and started, with the
// task queue they were scheduled on (sticky or normal), to explain an
// outlier delay.
func slowTaskStarts(evs []*historypb.HistoryEvent) []string {
	scheduled := map[int64]*historypb.HistoryEvent{}
	var out []string
	for _, ev := range evs {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			scheduled[ev.GetEventId()] = ev
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED, enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			id := ev.GetWorkflowTaskStartedEventAttributes().GetScheduledEventId()
			if id == 0 {
				id = ev.GetActivityTaskStartedEventAttributes().GetScheduledEventId()
			}
			s := scheduled[id]
			if s == nil {
				continue
			}
			if wait := ev.GetEventTime().AsTime().Sub(s.GetEventTime().AsTime()); wait > time.Second {
				tq := s.GetWorkflowTaskScheduledEventAttributes().GetTaskQueue()
				if tq == nil {
					tq = s.GetActivityTaskScheduledEventAttributes().GetTaskQueue()
				}
				attempt := s.GetWorkflowTaskScheduledEventAttributes().GetAttempt() + ev.GetActivityTaskStartedEventAttributes().GetAttempt()
				out = append(out, fmt.Sprintf("%s %d at %s started %.1f s later (queue %s, kind %s, attempt %d)",
					s.GetEventType(), id, s.GetEventTime().AsTime().UTC().Format("15:04:05.000"), wait.Seconds(),
					tq.GetName(), tq.GetKind(), attempt))
			}
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT:
			out = append(out, fmt.Sprintf("workflow task %d timed out at %s (%s)",
				ev.GetWorkflowTaskTimedOutEventAttributes().GetScheduledEventId(),
				ev.GetEventTime().AsTime().UTC().Format("15:04:05.000"), ev.GetWorkflowTaskTimedOutEventAttributes().GetTimeoutType()))
		}
	}
	return out
}

// followInProcess starts a prompt and follows it with client.Follow.
func (b *streamBatch) followInProcess(ctx context.Context, c *streamCall, on func(agent.Event)) (sdkclient.WorkflowRun, error) {
	run, err := b.h.startPrompt(ctx, b.s, c.session, "stream the answer")
	if err != nil {
		return nil, err
	}
	if _, err := b.k.Follow(ctx, c.session, run.GetRunID(), 0, on); err != nil {
		return nil, fmt.Errorf("follow session %s: %w", c.session, err)
	}
	return run, nil
}

// followRPC runs a prompt through a `starter rpc` process of its own and
// reads its events from its stdout.
func (b *streamBatch) followRPC(ctx context.Context, c *streamCall, on func(agent.Event)) (sdkclient.WorkflowRun, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	home := filepath.Join(b.h.dir, "starter-home")
	pid := &starterPID{}
	cmd := exec.CommandContext(ctx, exe, "rpc", "--session", c.session,
		"--data-dir", b.s.DataDir,
		"--temporal.address", b.proxy.Addr(),
		"--temporal.namespace", b.s.Temporal.Namespace,
		"--temporal.taskQueue", b.s.Temporal.TaskQueue,
		"--stream.intervalMs", strconv.FormatInt(b.s.Stream.IntervalMs, 10),
		"--compaction.enabled=false")
	cmd.Env = append(os.Environ(), envStarter+"=1", settings.EnvHome+"="+home, "HOME="+home)
	cmd.Stderr = pid
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start starter rpc for session %s: %w", c.session, err)
	}
	defer func() { _ = stdin.Close(); _ = cmd.Wait() }()
	var cpu0 time.Duration
	if p := pid.wait(ctx); p > 0 {
		cpu0 = procCPU(p)
		defer func() { c.followerCPU = procCPU(p) - cpu0 }()
	}
	if _, err := io.WriteString(stdin, `{"id":"p","type":"prompt","message":"stream the answer"}`+"\n"); err != nil {
		return nil, fmt.Errorf("rpc prompt in session %s: %w", c.session, err)
	}
	// The protocol's lines, read as a client reads them: events to on,
	// until the prompt's end (or a failed response).
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		l, err := rpc.DecodeLine(sc.Bytes())
		if err != nil {
			return nil, err
		}
		if r := l.Response; r != nil && !r.Success {
			return nil, fmt.Errorf("rpc session %s: %s", c.session, r.Error)
		}
		if e := l.Event; e != nil {
			on(*e)
			if e.Type == agent.EventPromptEnd {
				return b.h.c.GetWorkflow(ctx, workflows.WorkflowID(c.session), ""), nil
			}
		}
	}
	return nil, fmt.Errorf("rpc session %s: starter rpc ended before the prompt did (%v)", c.session, sc.Err())
}

// envStarter makes this binary `starter` (cli.Main): the bench's RPC
// clients run it as `starter rpc`. (Not a DURABLE_AGENT_ variable: the
// settings refuse unknown ones.)
const envStarter = "BENCH_RUN_AS_STARTER"

// starterPIDPrefix starts the line a starter prints on stderr first.
const starterPIDPrefix = "bench-starter-pid "

// runStarterIfAsked runs the starter when this process is one and reports
// whether it was.
func runStarterIfAsked() (bool, int) {
	if os.Getenv(envStarter) == "" {
		return false, 0
	}
	fmt.Fprintf(os.Stderr, "%s%d\n", starterPIDPrefix, os.Getpid())
	return true, cli.Main(os.Args[1:], cli.Env{})
}

// starterPID reads a starter's stderr for its pid line (and passes the
// rest on to the bench's stderr).
type starterPID struct {
	mu   sync.Mutex
	pid  int
	buf  []byte
	once sync.Once
	got  chan struct{}
}

func (p *starterPID) init() { p.once.Do(func() { p.got = make(chan struct{}) }) }

func (p *starterPID) Write(b []byte) (int, error) {
	p.init()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := strings.IndexByte(string(p.buf), '\n')
		if i < 0 {
			break
		}
		line := string(p.buf[:i])
		p.buf = p.buf[i+1:]
		if rest, ok := strings.CutPrefix(line, starterPIDPrefix); ok && p.pid == 0 {
			p.pid, _ = strconv.Atoi(rest)
			close(p.got)
			continue
		}
		fmt.Fprintf(os.Stderr, "starter: %s\n", line)
	}
	return len(b), nil
}

// wait returns the pid once the starter told it (0 if it did not in 30 s).
func (p *starterPID) wait(ctx context.Context) int {
	p.init()
	select {
	case <-p.got:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.pid
	case <-ctx.Done():
	case <-time.After(30 * time.Second):
	}
	return 0
}

// level sums up the delays and the cost of calls that streamed n at once.
func (b *streamBatch) level(n int, calls []streamCall, u usage) StreamLevel {
	l := StreamLevel{N: n, Calls: len(calls), WallSec: u.wall.Seconds(), Via: "rpc"}
	if b.inProcess {
		l.Via = "follow"
	}
	var delays, live, viaEnd []float64
	var streamNs int64
	heartbeats := 0
	for _, c := range calls {
		for i, end := range c.tap.Ends {
			at := time.Unix(0, c.tap.AtNs[i])
			j := sort.Search(len(c.live), func(j int) bool { return c.live[j].end >= end })
			if j < len(c.live) {
				live = append(live, ms(c.live[j].at.Sub(at)))
			} else {
				viaEnd = append(viaEnd, ms(c.endAt.Sub(at)))
			}
		}
		l.LiveBytes += len(c.liveText)
		l.TextBytes += len(c.final)
		streamNs += c.tap.EndNs - c.tap.StartNs
		heartbeats += c.tap.Heartbeats
	}
	delays = append(live, viaEnd...)
	b.explainOutlier(n, calls)
	l.Delay, l.Deltas, l.ViaEnd = dist(delays), len(delays), len(viaEnd)
	l.LiveDelay, l.EndDelay = dist(live), dist(viaEnd)
	if len(calls) > 0 {
		l.CallSec = float64(streamNs) / 1e9 / float64(len(calls))
	}
	if streamNs > 0 {
		l.HeartbeatsPerSec = float64(heartbeats) / (float64(streamNs) / 1e9)
	}
	if sec := u.wall.Seconds(); sec > 0 {
		// u.wall sums sequential batches of N prompts each.
		l.DescribesPerSec = float64(u.rpcs["DescribeWorkflowExecution"]) / sec / float64(n)
		l.QueriesPerSec = float64(u.rpcs["QueryWorkflow"]) / sec / float64(n)
		l.ServerCores = u.server.Seconds() / sec
		l.FollowerCores = u.followers.Seconds() / sec
		l.WorkerCores = u.worker.Seconds() / sec
	}
	return l
}

// outlierDelay is a delta delay the log explains (the stream rows'
// maxima are otherwise at most a few seconds).
const outlierDelay = 5 * time.Second

// explainOutlier logs, for the latest delta of calls that reached its
// follower more than outlierDelay after it left the provider, what the
// worker's heartbeat RPCs and both sides' slow RPCs did meanwhile.
func (b *streamBatch) explainOutlier(n int, calls []streamCall) {
	var worst time.Duration
	var wc *streamCall
	var wat, wgot time.Time
	for ci := range calls {
		c := &calls[ci]
		for i, end := range c.tap.Ends {
			at := time.Unix(0, c.tap.AtNs[i])
			j := sort.Search(len(c.live), func(j int) bool { return c.live[j].end >= end })
			got := c.endAt
			if j < len(c.live) {
				got = c.live[j].at
			}
			if d := got.Sub(at); d > worst {
				worst, wc, wat, wgot = d, c, at, got
			}
		}
	}
	if worst <= outlierDelay {
		return
	}
	clock := func(t time.Time) string { return t.UTC().Format("15:04:05.000") }
	var beats []string
	for _, bt := range wc.tap.Beats {
		s, e := time.Unix(0, bt[0]), time.Unix(0, bt[1])
		if e.After(wat.Add(-time.Second)) && s.Before(wgot.Add(time.Second)) {
			beats = append(beats, fmt.Sprintf("%s+%.0fms", clock(s), ms(e.Sub(s))))
		}
	}
	var slowTasks []string
	for _, c := range calls {
		for _, s := range c.slowTasks {
			slowTasks = append(slowTasks, c.session+": "+s)
		}
	}
	var slow []string
	for _, r := range b.rpcs.slowBetween(wat, wgot) {
		slow = append(slow, r.String())
	}
	b.h.logf("stream: outlier at N=%d: session %s: a delta left the provider at %s and reached the follower at %s (%.1f s); "+
		"the call ran %s to %s and the workflow closed at %s; %d heartbeat RPCs; heartbeat RPCs around it: [%s]; worker's slow RPCs: [%s]; followers' slow RPCs: [%s]; "+
		"tasks of the round that waited over 1 s to start: [%s]",
		n, wc.session, clock(wat), clock(wgot), worst.Seconds(),
		clock(time.Unix(0, wc.tap.StartNs)), clock(time.Unix(0, wc.tap.EndNs)), clock(wc.closedAt), len(wc.tap.Beats),
		strings.Join(beats, " "), strings.Join(wc.tap.Slow, "; "), strings.Join(slow, "; "), strings.Join(slowTasks, "; "))
}

// idle measures the CPU use of the server and the worker doing nothing
// for d.
func (b *streamBatch) idle(ctx context.Context, d time.Duration) (server, worker float64) {
	if d <= 0 {
		return 0, 0
	}
	pid := b.worker.cmd.Process.Pid
	s0, w0, t0 := selfCPU(), procCPU(pid), time.Now()
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	sec := time.Since(t0).Seconds()
	return (selfCPU() - s0).Seconds() / sec, (procCPU(pid) - w0).Seconds() / sec
}

// streamSignal is one delta as the workflow-streams design sends it.
type streamSignal struct {
	EntryID string                      `json:"entryId"`
	Event   agent.AssistantMessageEvent `json:"assistantMessageEvent"`
}

// streamSignalsWorkflow receives n delta signals and returns the number
// of bytes they carried.
func streamSignalsWorkflow(ctx workflow.Context, n int) (int, error) {
	ch := workflow.GetSignalChannel(ctx, streamSignalName)
	total := 0
	for i := 0; i < n; i++ {
		var d streamSignal
		ch.Receive(ctx, &d)
		total += len(d.Event.Delta)
	}
	return total, nil
}

// signals sends pieces as signals into a running streamSignalsWorkflow,
// paced like the provider streams them, and measures its history against
// the same workflow with no signal.
func (b *streamBatch) signals(ctx context.Context, pieces []string) (StreamSignals, error) {
	res := StreamSignals{Signals: len(pieces)}
	pace := time.Duration(b.s.Scripted.StreamDelayMs) * time.Millisecond
	measure := func(id string, pieces []string) (bytes, events, tasks int, err error) {
		run, err := b.h.c.ExecuteWorkflow(ctx, sdkclient.StartWorkflowOptions{ID: id, TaskQueue: b.s.Temporal.TaskQueue},
			streamSignalsWorkflowName, len(pieces))
		if err != nil {
			return 0, 0, 0, err
		}
		want, t0 := 0, time.Now()
		for i, p := range pieces {
			if d := time.Until(t0.Add(time.Duration(i) * pace)); d > 0 {
				time.Sleep(d)
			}
			sig := streamSignal{EntryID: "entry-0123456789abcdef",
				Event: agent.AssistantMessageEvent{Type: agent.DeltaText, Delta: p}}
			if err := b.h.c.SignalWorkflow(ctx, id, run.GetRunID(), streamSignalName, sig); err != nil {
				return 0, 0, 0, fmt.Errorf("signal %d to %s: %w", i, id, err)
			}
			want += len(p)
		}
		var got int
		if err := run.Get(ctx, &got); err != nil || got != want {
			return 0, 0, 0, fmt.Errorf("workflow %s received %d bytes (%v), want %d", id, got, err, want)
		}
		evs, err := b.h.history(ctx, run)
		if err != nil {
			return 0, 0, 0, err
		}
		for _, ev := range evs {
			if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED {
				tasks++
			}
		}
		return historyBytes(evs), len(evs), tasks, nil
	}
	var err error
	if res.BaseBytes, _, _, err = measure("stream-signals-none", nil); err != nil {
		return res, err
	}
	if res.Bytes, res.Events, res.WorkflowTasks, err = measure(fmt.Sprintf("stream-signals-%d", len(pieces)), pieces); err != nil {
		return res, err
	}
	res.AddedBytes = res.Bytes - res.BaseBytes
	return res, nil
}

// rows renders the stream benchmark.
func (r *StreamResult) rows() []Row {
	chunks := r.Many.Chunks
	out := []Row{{"stream history 1 vs " + strconv.Itoa(chunks) + " chunks",
		fmt.Sprintf("bytes/model call, the same %d B answer: 1 chunk %.0f B (%s events), %d chunks %.0f B (%s events) = %.4fx (%d prompts each, alternating)",
			r.AnswerBytes, r.One.MeanBytesPerCall, joinInts(r.One.Events), chunks, r.Many.MeanBytesPerCall, joinInts(r.Many.Events),
			r.HistoryRatio, r.Many.Prompts),
		"equal within 2%", verdict(r.HistoryRatio >= 0.98 && r.HistoryRatio <= 1.02)}}
	for _, l := range r.Levels {
		if l.Error != "" {
			out = append(out, Row{fmt.Sprintf("stream delay N=%d", l.N), "did not complete: " + l.Error,
				fmt.Sprintf("p95 <= %d ms", streamTargetP95Ms), verdict(false)})
			continue
		}
		out = append(out, Row{fmt.Sprintf("stream delay N=%d", l.N), l.describe(), fmt.Sprintf("p95 <= %d ms", streamTargetP95Ms),
			verdict(l.Delay.P95 <= streamTargetP95Ms)})
	}
	var sweep []string
	for _, l := range r.Levels {
		sweep = append(sweep, fmt.Sprintf("N=%d %.0f ms", l.N, l.Delay.P95))
	}
	broke := "none of the sweep broke it"
	if r.BrokeAt > 0 {
		broke = fmt.Sprintf("breaks at N=%d", r.BrokeAt)
	}
	out = append(out, Row{"stream concurrency",
		fmt.Sprintf("sustains %d concurrent streaming prompts with p95 <= %d ms, %s (p95 %s; stream.intervalMs %d, follower poll %d ms, scripted %d ms/word; idle CPU: bench process %.3f cores, worker %.3f)",
			r.Sustained, streamTargetP95Ms, broke, strings.Join(sweep, ", "), r.IntervalMs, r.PollMs, r.StreamDelayMs,
			r.IdleServerCores, r.IdleWorkerCores),
		"(info)", "info"})
	for _, v := range r.Variants {
		interval := v.IntervalMs
		if interval == 0 {
			interval = r.IntervalMs
		}
		read := "just after each heartbeat lands"
		if v.FixedReadMs > 0 {
			read = fmt.Sprintf("every %d ms", v.FixedReadMs)
		}
		out = append(out, Row{"stream variant " + v.Name,
			fmt.Sprintf("stream.intervalMs %d, follower reads %s: %s", interval, read, v.Level.describe()),
			fmt.Sprintf("p95 <= %d ms", streamTargetP95Ms), verdict(v.Level.Delay.P95 <= streamTargetP95Ms)})
		for _, l := range v.SweepLevels {
			if l.Error != "" {
				out = append(out, Row{fmt.Sprintf("stream variant %s N=%d", v.Name, l.N), "did not complete: " + l.Error,
					fmt.Sprintf("p95 <= %d ms", streamTargetP95Ms), verdict(false)})
				continue
			}
			out = append(out, Row{fmt.Sprintf("stream variant %s N=%d", v.Name, l.N), l.describe(),
				fmt.Sprintf("p95 <= %d ms", streamTargetP95Ms), verdict(l.Delay.P95 <= streamTargetP95Ms)})
		}
	}
	sg := r.Signals
	out = append(out, Row{"stream as signals",
		fmt.Sprintf("%d deltas as signals into a running workflow add %d B of history (%d events, %d workflow tasks): per call %.0f B = %.2fx the heartbeat design's %.0f B",
			sg.Signals, sg.AddedBytes, sg.Events, sg.WorkflowTasks, sg.PerCallBytes, sg.Ratio, r.Many.MeanBytesPerCall),
		"(comparison)", "info"})
	return out
}

// describe renders a level's delay and cost.
func (l StreamLevel) describe() string {
	to, cpu := "the RPC client reading the line (`starter rpc`)",
		fmt.Sprintf("bench process (embedded server + proxy) %.2f cores, starter processes %.2f cores, worker %.2f cores",
			l.ServerCores, l.FollowerCores, l.WorkerCores)
	if l.Via == "follow" {
		to, cpu = "the client.Follow callback (in process)",
			fmt.Sprintf("bench process (embedded server + followers) %.2f cores, worker %.2f cores", l.ServerCores, l.WorkerCores)
	}
	return fmt.Sprintf("provider delta to %s p50 %.1f ms, p95 %.1f ms, max %.1f ms (%d deltas of %d calls; %d in message_update: p50 %.1f / p95 %.1f ms; %d only in message_end: p50 %.1f / p95 %.1f ms; %.0f%% of the text as message_update); "+
		"per call %.1f heartbeat RPCs/s over %.1f s; per follower %.1f Describe/s, %.1f queries/s; CPU: %s",
		to, l.Delay.P50, l.Delay.P95, l.Delay.Max, l.Deltas, l.Calls, l.LiveDelay.N, l.LiveDelay.P50, l.LiveDelay.P95,
		l.ViaEnd, l.EndDelay.P50, l.EndDelay.P95, 100*float64(l.LiveBytes)/float64(max(l.TextBytes, 1)),
		l.HeartbeatsPerSec, l.CallSec, l.DescribesPerSec, l.QueriesPerSec, cpu)
}

func meanInts(xs []int) float64 {
	f := make([]float64, len(xs))
	for i, x := range xs {
		f[i] = float64(x)
	}
	return mean(f)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, "/")
}

// selfCPU is this process's CPU time, user and system, all threads.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procCPU is a process's CPU time from /proc (utime + stime, in the
// kernel's 100 Hz ticks); zero off Linux.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name may hold spaces: the fields start after its ')'.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// rpcCounter counts a client's RPCs by method, and heartbeats by task
// token.
type rpcCounter struct {
	mu         sync.Mutex
	methods    map[string]int
	heartbeats map[string]int
	// beatTimes: each heartbeat RPC's start and end (Unix ns) by task token.
	beatTimes map[string][][2]int64
	// slow: the RPCs that took longer than slowRPCAfter, for explaining an
	// outlier delay.
	slow []slowRPC
}

// slowRPC is one RPC that took longer than slowRPCAfter.
type slowRPC struct {
	method     string
	workflowID string
	start, end time.Time
	err        string
}

const slowRPCAfter = time.Second

func (c *rpcCounter) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	c.mu.Lock()
	if c.methods == nil {
		c.methods, c.heartbeats, c.beatTimes = map[string]int{}, map[string]int{}, map[string][][2]int64{}
	}
	c.methods[path.Base(method)]++
	hb, isBeat := req.(*workflowservice.RecordActivityTaskHeartbeatRequest)
	if isBeat {
		c.heartbeats[string(hb.GetTaskToken())]++
	}
	c.mu.Unlock()
	start := time.Now()
	err := invoker(ctx, method, req, reply, cc, opts...)
	end := time.Now()
	// Long polls are slow by design.
	slow := end.Sub(start) > slowRPCAfter && !strings.HasPrefix(path.Base(method), "Poll")
	if isBeat || slow {
		c.mu.Lock()
		if isBeat {
			tok := string(hb.GetTaskToken())
			c.beatTimes[tok] = append(c.beatTimes[tok], [2]int64{start.UnixNano(), end.UnixNano()})
		}
		if slow {
			s := slowRPC{method: path.Base(method), start: start, end: end}
			if w, ok := req.(interface {
				GetExecution() *commonpb.WorkflowExecution
			}); ok {
				s.workflowID = w.GetExecution().GetWorkflowId()
			}
			if err != nil {
				s.err = rpcErrText(err)
			}
			c.slow = append(c.slow, s)
		}
		c.mu.Unlock()
	}
	return err
}

func (s slowRPC) String() string {
	out := fmt.Sprintf("%s %s took %.1f s from %s", s.method, s.workflowID, s.end.Sub(s.start).Seconds(), s.start.UTC().Format("15:04:05.000"))
	if s.err != "" {
		out += ": " + s.err
	}
	return out
}

func rpcErrText(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// slowBetween: the slow RPCs that overlap [from, to].
func (c *rpcCounter) slowBetween(from, to time.Time) []slowRPC {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []slowRPC
	for _, s := range c.slow {
		if s.end.After(from) && s.start.Before(to) {
			out = append(out, s)
		}
	}
	return out
}

// count counts one call of method (a proxied one).
func (c *rpcCounter) count(method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.methods == nil {
		c.methods, c.heartbeats = map[string]int{}, map[string]int{}
	}
	c.methods[method]++
}

func (c *rpcCounter) snapshot() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.methods))
	for m, n := range c.methods {
		out[m] = n
	}
	return out
}

func (c *rpcCounter) since(before map[string]int) map[string]int {
	now := c.snapshot()
	for m := range now {
		now[m] -= before[m]
	}
	return now
}

func (c *rpcCounter) heartbeatsOf(token []byte) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.heartbeats[string(token)]
}

func (c *rpcCounter) beatTimesOf(token []byte) [][2]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.beatTimes[string(token)])
}

// dialCounting dials like client.Dial (client profile, settings, payload
// codec) with c counting the RPCs, and the extra interceptors after it.
func dialCounting(ctx context.Context, s settings.Settings, c *rpcCounter, extra ...grpc.UnaryClientInterceptor) (sdkclient.Client, error) {
	opts, err := client.ClientOptions(s, nil)
	if err != nil {
		return nil, err
	}
	cdc, err := codec.FromSettings(s)
	if err != nil {
		return nil, err
	}
	opts.DataConverter = cdc.DataConverter()
	opts.Logger = sdklog.NewStructuredLogger(quiet())
	// As client.Dial's: the heartbeat guard, outside the counter (which
	// counts and times what the wire did).
	opts.ConnectionOptions.DialOptions = append(opts.ConnectionOptions.DialOptions,
		grpc.WithChainUnaryInterceptor(append([]grpc.UnaryClientInterceptor{activities.HeartbeatGuard, c.unary}, extra...)...))
	cctx, cancel := context.WithTimeout(ctx, client.DialTimeout)
	defer cancel()
	return sdkclient.DialContext(cctx, opts)
}

// childRPCs counts the RPCs of the stream worker's client.
var childRPCs rpcCounter

// dialChild is the child worker's client: the product's, counting RPCs
// on a stream queue.
func dialChild(s settings.Settings) (sdkclient.Client, error) {
	if strings.HasPrefix(s.Temporal.TaskQueue, streamTaskQueue) {
		return dialCounting(context.Background(), s, &childRPCs)
	}
	return client.Dial(context.Background(), s, quiet())
}

// newChildWorker is the child's worker: app.NewWorker, except on a
// stream queue, where the scripted provider is tapped and the signals
// workflow is registered too.
func newChildWorker(c sdkclient.Client, s settings.Settings) (worker.Worker, error) {
	if !strings.HasPrefix(s.Temporal.TaskQueue, streamTaskQueue) {
		return app.NewWorker(c, s)
	}
	acts, err := app.NewActivities(s)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(tapFile(s), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open stream tap: %w", err)
	}
	// The push hub of stream.push, as app.NewWorker starts it (the
	// process's exit closes it).
	if acts.Push, err = app.ServePush(s); err != nil {
		return nil, err
	}
	providers := acts.Provider
	acts.Provider = func(name string) (llm.Provider, error) {
		p, err := providers(name)
		if err != nil || name != "scripted" {
			return p, err
		}
		return &tapProvider{inner: p, out: f, rpcs: &childRPCs}, nil
	}
	w := worker.New(c, s.Temporal.TaskQueue, app.WorkerOptions(s))
	app.Register(w, acts)
	w.RegisterWorkflowWithOptions(streamSignalsWorkflow, workflow.RegisterOptions{Name: streamSignalsWorkflowName})
	return w, nil
}

// tapFile is where the stream worker of s writes its stamps.
func tapFile(s settings.Settings) string {
	return filepath.Join(s.DataDir, "bench-stream-tap-"+s.Temporal.TaskQueue+".jsonl")
}

// tapRecord is one model call as the tap saw it: the byte offset each
// delta ended at and when it left the provider (Unix ns), and the
// heartbeat RPCs the call's activity sent while the provider ran.
type tapRecord struct {
	Session    string  `json:"session"`
	StartNs    int64   `json:"startNs"`
	EndNs      int64   `json:"endNs"`
	Ends       []int   `json:"ends"`
	AtNs       []int64 `json:"atNs"`
	Heartbeats int     `json:"heartbeats"`
	// Beats: each heartbeat RPC's start and end (Unix ns) while the
	// provider ran, to explain an outlier delay.
	Beats [][2]int64 `json:"beats,omitempty"`
	// Slow: the worker's RPCs slower than slowRPCAfter while the provider ran.
	Slow []string `json:"slow,omitempty"`
	// Cut: why the call's context ended before the provider was done
	// (context.Cause), "" when it did not.
	Cut string `json:"cut,omitempty"`
}

// tapProvider stamps the text deltas of a provider as they leave it. In a
// oneChunkPrefix session it hands the whole text over as one delta when
// the provider is done.
type tapProvider struct {
	inner llm.Provider
	mu    sync.Mutex
	out   *os.File
	rpcs  *rpcCounter
}

func (p *tapProvider) Complete(ctx context.Context, req llm.Request) agent.Message {
	rec := tapRecord{Session: req.SessionID, StartNs: time.Now().UnixNano()}
	onDelta, one := req.OnDelta, strings.HasPrefix(req.SessionID, oneChunkPrefix)
	var held strings.Builder
	total := 0
	emit := func(d llm.Delta) {
		total += len(d.Delta)
		rec.Ends, rec.AtNs = append(rec.Ends, total), append(rec.AtNs, time.Now().UnixNano())
		if onDelta != nil {
			onDelta(d)
		}
	}
	req.OnDelta = func(d llm.Delta) {
		switch {
		case d.Type != agent.DeltaText:
			if onDelta != nil {
				onDelta(d)
			}
		case one:
			held.WriteString(d.Delta)
		default:
			emit(d)
		}
	}
	msg := p.inner.Complete(ctx, req)
	if held.Len() > 0 {
		emit(llm.Delta{Type: agent.DeltaText, Delta: held.String()})
	}
	rec.EndNs = time.Now().UnixNano()
	if ctx.Err() != nil {
		rec.Cut = fmt.Sprintf("%v (%T)", context.Cause(ctx), context.Cause(ctx))
	}
	if activity.IsActivity(ctx) {
		rec.Heartbeats = p.rpcs.heartbeatsOf(activity.GetInfo(ctx).TaskToken)
		rec.Beats = p.rpcs.beatTimesOf(activity.GetInfo(ctx).TaskToken)
		for _, r := range p.rpcs.slowBetween(time.Unix(0, rec.StartNs), time.Unix(0, rec.EndNs)) {
			rec.Slow = append(rec.Slow, r.String())
		}
	}
	if line, err := json.Marshal(rec); err == nil {
		p.mu.Lock()
		_, _ = p.out.Write(append(line, '\n'))
		p.mu.Unlock()
	}
	return msg
}

// readTap reads the tap's records, the latest per session.
func readTap(file string) (map[string]tapRecord, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("read stream tap: %w", err)
	}
	defer f.Close()
	out := map[string]tapRecord{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r tapRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("read stream tap %s: %w", file, err)
		}
		out[r.Session] = r
	}
	return out, sc.Err()
}
