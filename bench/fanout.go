package main

// The fanout benchmark (issue 26, "Live output that scales"): followers
// of live output whose cost does not grow with their number. The stream
// benchmark's worker and answer (4096 B in 400 words at 20 ms a word, 8.2
// s per call), with the prompts followed in this process by
// client.Follow on one controller, whose client counts its RPCs (every
// RPC on it is a follower's: the prompts are started and their histories
// read on the harness's client). Followers of one prompt share one reader
// (internal/client, share.go). It measures:
//   - the RPCs per second per prompt attributable to following, with 1
//     and with 10 followers per prompt (target: equal);
//   - delta-to-callback delay with FanoutPrompts prompts streaming at once,
//     FanoutFollowers followers each (target p95 <= 300 ms);
//   - stalls: deltas later than 5 s in FanoutRounds rounds of
//     FanoutRoundPrompts prompts with 2 followers each (target 0).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
)

// stallDelay is a delta delay counted as a stall.
const stallDelay = 5 * time.Second

// FanoutLevel is one batch: Prompts streaming at once, each followed by
// Followers Follow calls.
type FanoutLevel struct {
	Prompts   int `json:"prompts"`
	Followers int `json:"followers"`
	// Level is the delay over every follower's deltas; its
	// DescribesPerSec and QueriesPerSec are per prompt.
	Level StreamLevel `json:"level"`
	// RPCsPerPromptSec is every RPC of the followers' client per second
	// per prompt, RPCs by method.
	RPCsPerPromptSec float64        `json:"rpcsPerPromptSec"`
	RPCs             map[string]int `json:"rpcs"`
	// Stalls are the deltas later than stallDelay.
	Stalls int `json:"stalls"`
	// Retried prompts had their model call made again (a heartbeat
	// timeout under load): their deltas are the last call's.
	Retried int    `json:"retried"`
	Load    string `json:"load"`
	// Pushed is the snapshots the followers' push streams brought (0:
	// the heartbeats served them all).
	Pushed int64 `json:"pushed"`
}

// FanoutResult is the fanout benchmark.
type FanoutResult struct {
	// One and Ten are the same prompts with 1 and 10 followers each;
	// RPCRatio is Ten's RPCs per prompt-second over One's.
	One      FanoutLevel `json:"one"`
	Ten      FanoutLevel `json:"ten"`
	RPCRatio float64     `json:"rpcRatio"`
	// Scale is FanoutPrompts prompts with FanoutFollowers followers each
	// (Error set: it did not complete).
	Scale FanoutLevel `json:"scale"`
	// Rounds of the stall count; StallRounds had a stall; MaxDelayMs is
	// the slowest delta of all rounds.
	Rounds      []FanoutLevel `json:"rounds"`
	StallRounds int           `json:"stallRounds"`
	// Transport is how the worker published live output.
	Transport string `json:"transport"`
	// FailedRounds did not complete (Level.Error says why).
	FailedRounds int     `json:"failedRounds"`
	Stalls       int     `json:"stalls"`
	MaxDelayMs   float64 `json:"maxDelayMs"`
}

// fanoutBench runs the fanout benchmark on a stream worker.
func (h *harness) fanoutBench(ctx context.Context) (*FanoutResult, error) {
	pieces := streamPieces(h.cfg.StreamAnswerBytes, h.cfg.StreamChunks)
	s := h.streamSettings("fanout", strings.Join(pieces, ""))
	// The worker pushes live output from loopback (the push path,
	// docs/live.md) unless the heartbeats alone are measured.
	s.Stream.Push = "127.0.0.1:0"
	if h.cfg.FanoutHeartbeats {
		s.Stream.Push = "off"
	}
	res := &FanoutResult{Transport: "push (stream.push " + s.Stream.Push + ", heartbeats the fallback)"}
	if h.cfg.FanoutHeartbeats {
		res.Transport = "heartbeats (stream.push off)"
	}
	err := h.withStreamWorker(ctx, s, StreamVariant{Name: "fanout", InProcess: true}, func(sb *streamBatch) error {
		if _, err := sb.fanout(ctx, "stream-fan-warmup", 1, 1); err != nil {
			return err
		}
		var err error
		n := h.cfg.FanoutRatioPrompts
		if res.One, err = sb.fanout(ctx, "stream-fan-one", n, 1); err != nil {
			return err
		}
		if res.Ten, err = sb.fanout(ctx, "stream-fan-ten", n, 10); err != nil {
			return err
		}
		if res.One.RPCsPerPromptSec > 0 {
			res.RPCRatio = res.Ten.RPCsPerPromptSec / res.One.RPCsPerPromptSec
		}
		h.logf("fanout: RPCs per prompt-second: 1 follower %.1f, 10 followers %.1f = %.2fx",
			res.One.RPCsPerPromptSec, res.Ten.RPCsPerPromptSec, res.RPCRatio)
		for r := range h.cfg.FanoutRounds {
			l, err := sb.fanout(ctx, fmt.Sprintf("stream-fan-r%02d", r), h.cfg.FanoutRoundPrompts, 2)
			if err != nil {
				h.logf("fanout: round %d failed: %v", r, err)
				l = FanoutLevel{Prompts: h.cfg.FanoutRoundPrompts, Followers: 2,
					Level: StreamLevel{N: h.cfg.FanoutRoundPrompts, Error: err.Error()}, Load: loadAverage()}
				res.FailedRounds++
			}
			res.Rounds = append(res.Rounds, l)
			res.Stalls += l.Stalls
			if l.Stalls > 0 {
				res.StallRounds++
			}
			res.MaxDelayMs = max(res.MaxDelayMs, l.Level.Delay.Max)
		}
		h.logf("fanout: %d rounds, %d with a stall > %s, slowest delta %.0f ms", len(res.Rounds), res.StallRounds, stallDelay, res.MaxDelayMs)
		if res.Scale, err = sb.fanout(ctx, "stream-fan-scale", h.cfg.FanoutPrompts, h.cfg.FanoutFollowers); err != nil {
			h.logf("fanout: %d prompts x %d followers failed: %v", h.cfg.FanoutPrompts, h.cfg.FanoutFollowers, err)
			res.Scale = FanoutLevel{Prompts: h.cfg.FanoutPrompts, Followers: h.cfg.FanoutFollowers,
				Level: StreamLevel{N: h.cfg.FanoutPrompts, Error: err.Error()}, Load: loadAverage()}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// fanout starts n prompts at once in sessions prefix-000..., follows each
// with f Follow calls of sb's controller until prompt_end, and checks that
// every follower got the whole answer as its deltas and its message_end.
func (b *streamBatch) fanout(ctx context.Context, prefix string, n, f int) (FanoutLevel, error) {
	calls := make([]streamCall, n*f)
	for i := range calls {
		calls[i].session = fmt.Sprintf("%s-%03d", prefix, i/f)
	}
	before := b.rpcs.snapshot()
	pushed0 := client.PushedSnapshots()
	server0, worker0, t0 := selfCPU(), procCPU(b.worker.cmd.Process.Pid), time.Now()
	err := parallel(n, n, func(i int) error {
		session := calls[i*f].session
		run, err := b.h.startPrompt(ctx, b.s, session, "stream the answer")
		if err != nil {
			return err
		}
		var wg sync.WaitGroup
		errs := make([]error, f)
		texts := make([]*strings.Builder, f)
		for j := range f {
			c := &calls[i*f+j]
			texts[j] = &strings.Builder{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[j] = b.k.Follow(ctx, session, run.GetRunID(), 0, fanoutRecorder(c, texts[j]))
			}()
		}
		wg.Wait()
		// What the log explains an outlier with: the history's slow tasks
		// and when the workflow closed.
		if evs, err := b.h.history(ctx, run); err == nil && len(evs) > 0 {
			modelCalls := 0
			for _, ev := range evs {
				if ev.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
					ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == activities.CallModelName {
					modelCalls++
				}
			}
			if modelCalls > 1 {
				b.h.logf("fanout: session %s made %d model calls: %s", session, modelCalls, strings.Join(modelCallOutcomes(evs), "; "))
			}
			for j := range f {
				c := &calls[i*f+j]
				c.slowTasks, c.closedAt = slowTaskStarts(evs), evs[len(evs)-1].GetEventTime().AsTime()
				c.events = modelCalls // the model calls of the prompt (1 unless retried)
			}
		}
		for j := range f {
			c := &calls[i*f+j]
			c.liveText = texts[j].String()
			switch {
			case errs[j] != nil:
				return fmt.Errorf("follow session %s: %w", session, errs[j])
			case c.final != b.answer:
				return fmt.Errorf("fanout: session %s follower %d: message_end has %d bytes (%s), want the %d-byte answer",
					session, j, len(c.final), c.endReason, len(b.answer))
			case c.liveText != "" && c.liveText != c.final: // none: all came with message_end
				return fmt.Errorf("fanout: session %s follower %d: the deltas (%d bytes) do not add up to the final text (%d bytes)",
					session, j, len(c.liveText), len(c.final))
			}
		}
		return nil
	})
	b.last = usage{wall: time.Since(t0), server: selfCPU() - server0,
		worker: procCPU(b.worker.cmd.Process.Pid) - worker0, rpcs: b.rpcs.since(before)}
	if err != nil {
		return FanoutLevel{}, err
	}
	taps, err := readTap(b.tap)
	if err != nil {
		return FanoutLevel{}, err
	}
	for i := range calls {
		rec, ok := taps[calls[i].session]
		if !ok {
			return FanoutLevel{}, fmt.Errorf("fanout: the tap has no call of session %s", calls[i].session)
		}
		calls[i].tap = rec
	}
	l := FanoutLevel{Prompts: n, Followers: f, Level: b.level(n, calls, b.last), RPCs: b.last.rpcs, Load: loadAverage(),
		Pushed: client.PushedSnapshots() - pushed0}
	for i := 0; i < len(calls); i += f {
		if calls[i].events > 1 {
			l.Retried++
			b.h.logf("fanout: session %s's model calls as the worker's tap saw them: %s", calls[i].session, tapCallsOf(b.tap, calls[i].session))
		}
	}
	total := 0
	for _, c := range b.last.rpcs {
		total += c
	}
	if sec := b.last.wall.Seconds(); sec > 0 {
		l.RPCsPerPromptSec = float64(total) / sec / float64(n)
	}
	for _, c := range calls {
		for i, end := range c.tap.Ends {
			got := c.endAt
			for _, m := range c.live {
				if m.end >= end {
					got = m.at
					break
				}
			}
			if got.Sub(time.Unix(0, c.tap.AtNs[i])) > stallDelay {
				l.Stalls++
			}
		}
	}
	// When each call's first heartbeat landed (the push address reaches
	// the followers with it): beats that took a second or more were lost.
	var firstLanded []float64
	lostFirst := 0
	for i := 0; i < len(calls); i += f {
		t := calls[i].tap
		for j, bt := range t.Beats {
			if bt[1]-bt[0] >= int64(time.Second) {
				if j == 0 {
					lostFirst++
				}
				continue
			}
			firstLanded = append(firstLanded, float64(bt[1]-t.StartNs)/1e6)
			break
		}
	}
	sort.Float64s(firstLanded)
	if len(firstLanded) > 0 {
		b.h.logf("fanout: %d prompts: first heartbeat landed p50 %.0f ms p95 %.0f ms after the call started; %d calls' first heartbeat lost",
			n, firstLanded[len(firstLanded)/2], firstLanded[len(firstLanded)*95/100], lostFirst)
	}
	b.h.logf("fanout: %d prompts x %d followers: delay p50 %.0f ms p95 %.0f ms max %.0f ms, %.1f RPCs/s per prompt (%v), %d stalls, server %.2f cores, worker %.2f, %d snapshots pushed, load %s",
		n, f, l.Level.Delay.P50, l.Level.Delay.P95, l.Level.Delay.Max, l.RPCsPerPromptSec, l.RPCs, l.Stalls,
		l.Level.ServerCores, l.Level.WorkerCores, l.Pushed, l.Load)
	return l, nil
}

// fanoutRecorder is a follower's fn: it marks when each byte of the
// answer arrived, and keeps the message_end.
// A later attempt of the model call (the workflow retried it: under load
// a heartbeat timeout) supersedes the earlier one's text, as in every
// consumer (live.Partial): the marks start again with it, as the tap's
// record (the last call of the session) does.
func fanoutRecorder(c *streamCall, text *strings.Builder) func(agent.Event) {
	attempt := 0
	return func(e agent.Event) {
		now := time.Now()
		switch {
		case e.Type == agent.EventMessageUpdate && e.AssistantMessageEvent != nil &&
			e.AssistantMessageEvent.Type == agent.DeltaText:
			if a := e.AssistantMessageEvent.Attempt; a > attempt {
				attempt = a
				text.Reset()
				c.live = nil
			}
			text.WriteString(e.AssistantMessageEvent.Delta)
			c.live = append(c.live, liveMark{end: text.Len(), at: now})
		case e.Type == agent.EventMessageEnd && e.Message != nil && e.Message.Role == agent.RoleAssistant:
			c.final, c.endAt = e.Message.Text(), now
			c.endReason = string(e.Message.StopReason)
			if e.Message.ErrorMessage != "" {
				c.endReason += ": " + e.Message.ErrorMessage
			}
		}
	}
}

// rows renders the fanout benchmark.
func (r *FanoutResult) rows() []Row {
	lvl := func(l FanoutLevel) string {
		d := l.Level.Delay
		return fmt.Sprintf("p50 %.1f ms, p95 %.1f ms, max %.1f ms (%d deltas of %d followers); %.1f RPCs/s per prompt (%.1f Describe, %.1f queries); %d snapshots pushed; CPU: bench process (embedded server + followers) %.2f cores, worker %.2f; load %s",
			d.P50, d.P95, d.Max, l.Level.Deltas, l.Level.Calls, l.RPCsPerPromptSec, l.Level.DescribesPerSec, l.Level.QueriesPerSec,
			l.Pushed, l.Level.ServerCores, l.Level.WorkerCores, l.Load)
	}
	perPrompt := func(l FanoutLevel) float64 {
		total := 0
		for _, c := range l.RPCs {
			total += c
		}
		return float64(total) / float64(max(l.Prompts, 1))
	}
	out := []Row{{"fanout transport", r.Transport, "", "info"},
		{"fanout RPCs 1 vs 10 followers",
			fmt.Sprintf("Temporal RPCs per second per prompt while followed, %d prompts: 1 follower each %.2f, 10 followers each %.2f = %.2fx (RPCs per prompt %.0f vs %.0f; 1: %s; 10: %s)",
				r.One.Prompts, r.One.RPCsPerPromptSec, r.Ten.RPCsPerPromptSec, r.RPCRatio, perPrompt(r.One), perPrompt(r.Ten), lvl(r.One), lvl(r.Ten)),
			"equal (0.8x-1.25x)", verdict(r.RPCRatio >= 0.8 && r.RPCRatio <= 1.25)}}
	if len(r.Rounds) > 0 {
		var p95 []string
		for _, l := range r.Rounds {
			p95 = append(p95, fmt.Sprintf("%.0f", l.Level.Delay.P95))
		}
		retried := 0
		for _, l := range r.Rounds {
			retried += l.Retried
		}
		out = append(out, Row{"fanout stalls",
			fmt.Sprintf("%d rounds of %d prompts x 2 followers: %d deltas later than %s in %d rounds; %d rounds did not complete; slowest delta %.0f ms; p95 per round %s ms; %d prompts' model call retried",
				len(r.Rounds), r.Rounds[0].Prompts, r.Stalls, stallDelay, r.StallRounds, r.FailedRounds, r.MaxDelayMs, strings.Join(p95, ", "), retried),
			"0 stalls > 5 s", verdict(r.Stalls == 0 && r.FailedRounds == 0)})
	}
	s := r.Scale
	if s.Level.Error != "" {
		out = append(out, Row{fmt.Sprintf("fanout %d prompts x %d followers", s.Prompts, s.Followers),
			"did not complete: " + s.Level.Error + "; load " + s.Load, "p95 <= 300 ms", "missed"})
	} else if s.Prompts > 0 {
		out = append(out, Row{fmt.Sprintf("fanout %d prompts x %d followers", s.Prompts, s.Followers),
			"delta to the client.Follow callback (in process) " + lvl(s),
			"p95 <= 300 ms", verdict(s.Level.Delay.P95 <= streamTargetP95Ms)})
	}
	return out
}

// modelCallOutcomes says, for each CallModel of a history, when it was
// scheduled, started and closed and how (a timeout's type, a failure's
// message): why a prompt's model call was made again.
func modelCallOutcomes(evs []*historypb.HistoryEvent) []string {
	byID := map[int64]*historypb.HistoryEvent{}
	started := map[int64]*historypb.HistoryEvent{}
	at := func(ev *historypb.HistoryEvent) string {
		return ev.GetEventTime().AsTime().UTC().Format("15:04:05.000")
	}
	var out []string
	for _, ev := range evs {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == activities.CallModelName {
				byID[ev.GetEventId()] = ev
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			started[ev.GetActivityTaskStartedEventAttributes().GetScheduledEventId()] = ev
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, enumspb.EVENT_TYPE_ACTIVITY_TASK_FAILED,
			enumspb.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT, enumspb.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
			id := ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId() +
				ev.GetActivityTaskFailedEventAttributes().GetScheduledEventId() +
				ev.GetActivityTaskTimedOutEventAttributes().GetScheduledEventId() +
				ev.GetActivityTaskCanceledEventAttributes().GetScheduledEventId()
			s := byID[id]
			if s == nil {
				continue
			}
			how := strings.TrimPrefix(ev.GetEventType().String(), "EVENT_TYPE_ACTIVITY_TASK_")
			f := ev.GetActivityTaskFailedEventAttributes().GetFailure()
			if t := ev.GetActivityTaskTimedOutEventAttributes().GetFailure(); t != nil {
				f = t
			}
			if f != nil {
				how += fmt.Sprintf(" (%s; timeout %s)", f.GetMessage(), f.GetTimeoutFailureInfo().GetTimeoutType())
			}
			st := started[id]
			out = append(out, fmt.Sprintf("CallModel %d scheduled %s, started %s (attempt %d, %s), %s at %s",
				id, at(s), at(st), st.GetActivityTaskStartedEventAttributes().GetAttempt(),
				st.GetActivityTaskStartedEventAttributes().GetIdentity(), how, at(ev)))
		}
	}
	return out
}

// tapCallsOf describes every model call of session the tap saw: when the
// provider ran, and its heartbeat RPCs (the last ones' times).
func tapCallsOf(file, session string) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	at := func(ns int64) string { return time.Unix(0, ns).UTC().Format("15:04:05.000") }
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		var r tapRecord
		if json.Unmarshal([]byte(line), &r) != nil || r.Session != session {
			continue
		}
		var beats []string
		for _, b := range r.Beats[max(len(r.Beats)-3, 0):] {
			beats = append(beats, fmt.Sprintf("%s+%dms", at(b[0]), (b[1]-b[0])/1e6))
		}
		cut := ""
		if r.Cut != "" {
			cut = ", cut: " + r.Cut
		}
		out = append(out, fmt.Sprintf("provider %s to %s%s, %d heartbeat RPCs (last: %s), slow RPCs: [%s]",
			at(r.StartNs), at(r.EndNs), cut, r.Heartbeats, strings.Join(beats, ", "), strings.Join(r.Slow, "; ")))
	}
	return strings.Join(out, " | ")
}
