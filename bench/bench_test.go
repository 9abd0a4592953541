package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
)

func TestMain(m *testing.M) {
	// A child worker is this test binary re-executed; it must run no test.
	childArgs = []string{"-test.run=^$"}
	if child, code := runChildIfAsked(); child {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// The harness runs every benchmark end to end on the embedded server with
// tiny sizes, and the table has every row with sane values. The targets
// are not asserted: this machine is shared and noisy.
func TestBench_QuickRunHasEveryRowWithSaneValues(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the embedded Temporal server and worker processes")
	}
	var log bytes.Buffer
	cfg := QuickConfig()
	cfg.Log = &log
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	rep, err := Run(ctx, cfg, []string{"bench", "--quick"})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	if len(rep.Errors) > 0 {
		t.Fatalf("benchmarks failed: %v\n%s", rep.Errors, log.String())
	}

	var table bytes.Buffer
	writeTable(&table, rep)
	for _, name := range []string{"overhead", "abort latency", "timer accuracy", "history growth",
		"tools history growth", "tools output size", "tools step cost",
		"stream history 1 vs 400 chunks", "stream delay N=1", "stream delay N=2", "stream concurrency", "stream variant follow-every-poll", "stream as signals",
		"concurrency N=10 rss", "concurrency N=10 throughput", "mcp client call", "mcp step in a prompt", "checkpoint Take", "checkpoint store growth", "checkpoint in a tool turn, model 0 ms"} {
		if !strings.Contains(table.String(), "| "+name+" |") {
			t.Errorf("table has no %q row:\n%s", name, table.String())
		}
	}
	var js bytes.Buffer
	if err := writeJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Rows) != len(rep.Rows) {
		t.Fatalf("JSON output does not round-trip: %v", err)
	}

	o := rep.Overhead
	if o.Prompt.N != cfg.OverheadRuns || o.Bare.N != cfg.OverheadRuns || o.Ratio <= 0.2 || o.Ratio > 50 {
		t.Errorf("overhead %+v: want %d samples each and a ratio in (0.2, 50]", o, cfg.OverheadRuns)
	}
	// A prompt's session reads and writes are local activities: its one
	// activity is the model call.
	if o.BareActivities != 1 || o.PromptActivities < 1 {
		t.Errorf("activities: bare %d (want 1), prompt %d (want >= 1)", o.BareActivities, o.PromptActivities)
	}
	a := rep.Abort
	if a.Latency.N != cfg.AbortRuns || a.Latency.Min <= 0 || a.Latency.Max >= float64(cfg.AbortBackoffMs) {
		t.Errorf("abort latency %+v: want %d samples, each in (0, %d ms)", a.Latency, cfg.AbortRuns, cfg.AbortBackoffMs)
	}
	tm := rep.Timer
	if tm.Resume.N != cfg.TimerRuns*cfg.TimerFaults || tm.Fire.Min < -50 || tm.Resume.P50 < tm.Fire.P50 || tm.Announced.Max > 10_000 {
		t.Errorf("timer %+v: want %d samples, no timer firing early, resumption after firing", tm, cfg.TimerRuns*cfg.TimerFaults)
	}
	hi := rep.History
	if len(hi.Points) != len(cfg.HistoryCheckpoints) || hi.Ratio < 0.8 || hi.Ratio > 1.5 {
		t.Fatalf("history %+v: want %d points with a ratio near 1", hi, len(cfg.HistoryCheckpoints))
	}
	for _, p := range hi.Points {
		// The history holds at least the user message and the answer.
		if p.ModelCalls != 1 || p.BytesPerCall < 2*cfg.MessageBytes {
			t.Errorf("history point %+v: want 1 model call and >= %d bytes", p, 2*cfg.MessageBytes)
		}
	}
	tl := rep.Tools
	for _, p := range []ToolsPoint{tl.Small, tl.Large, tl.LargeOutput} {
		// Every call ran and printed its output; the history holds at
		// least a model call's and a tool call's events, and the script
		// was found in it (in the first run's input at least).
		if p.ToolCalls != p.Calls || p.ModelCalls != p.Calls+1 || p.ToolErrors != 0 ||
			p.ToolOutputMin != p.OutputBytes || p.ToolOutputMax != p.OutputBytes ||
			p.NetBytesPerCall < 1000 || p.ScriptBytes <= 0 || p.ScriptBytes >= p.Bytes || p.Ms <= 0 {
			t.Errorf("tools point %+v: want every call run once with its output, >= 1000 B per call, part of it the script", p)
		}
	}
	if tl.Small.Calls != cfg.ToolsSmallCalls || tl.Large.Calls != cfg.ToolsCalls || tl.LargeOutput.Calls != cfg.ToolsCalls ||
		tl.Small.OutputBytes != 100 || tl.LargeOutput.OutputBytes != 50*1024 {
		t.Errorf("tools sizes %+v %+v %+v", tl.Small, tl.Large, tl.LargeOutput)
	}
	// The low continue-as-new threshold splits the long prompts: the
	// chain was followed.
	if tl.Small.Runs != 1 || tl.Large.Runs < 2 || tl.LargeOutput.Runs < 2 {
		t.Errorf("tools runs: %d, %d, %d; want 1 and >= 2 (continue-as-new at %d events)",
			tl.Small.Runs, tl.Large.Runs, tl.LargeOutput.Runs, cfg.ToolsContinueAsNewEvents)
	}
	if tl.GrowthRatio < 0.5 || tl.GrowthRatio > 2 || tl.OutputRatio < 0.8 || tl.OutputRatio > 1.25 ||
		tl.GrowthRatioRaw < tl.GrowthRatio {
		t.Errorf("tools ratios: growth %.3f (raw %.3f), output %.3f: want near 1", tl.GrowthRatio, tl.GrowthRatioRaw, tl.OutputRatio)
	}
	if tl.PromptSmall.N != cfg.ToolsRounds || tl.BareLarge.N != cfg.ToolsRounds || tl.StepMs <= 0 ||
		tl.BareActivityMs <= 0 || tl.StepRatio <= 0.2 || tl.StepRatio > 50 {
		t.Errorf("tools step cost: %.1f ms per step, %.1f ms per bare activity, ratio %.2f; want positive and a ratio in (0.2, 50]",
			tl.StepMs, tl.BareActivityMs, tl.StepRatio)
	}
	checkStream(t, cfg, rep.Stream)
	if len(rep.Concurrency) != 1 {
		t.Fatalf("concurrency results %+v", rep.Concurrency)
	}
	c := rep.Concurrency[0]
	delay := float64(cfg.ConcurrencyDelayMs) / 1000
	if c.InBackoff != 10 || c.BareSec < delay || c.PromptSec < delay || c.Ratio <= 0 {
		t.Errorf("concurrency %+v: want 10 in backoff, batches no faster than the %.0f s timer", c, delay)
	}
	if runtime.GOOS == "linux" && (c.IdleRSSMB < 5 || c.HoldRSSMB < c.IdleRSSMB/2 || c.PeakRSSMB < 5 || c.HoldAnonMB <= 0 || c.HoldAnonMB > c.HoldRSSMB) {
		t.Errorf("worker RSS %+v: want real readings from /proc", c)
	}
}

// checkStream: live output adds nothing to history (1 vs 400 chunks within
// 2%), every delta the provider emitted reached the follower (live or with
// message_end; the bench itself fails a prompt whose message_update deltas
// are not a prefix of its final text, which must be the answer), part of
// the text arrived before message_end, heartbeats were sent, and signals
// put every delta into history.
func checkStream(t *testing.T, cfg Config, st *StreamResult) {
	t.Helper()
	if st == nil {
		t.Fatal("no stream result")
	}
	if st.HistoryRatio < 0.98 || st.HistoryRatio > 1.02 || st.One.Prompts != cfg.StreamRuns || st.Many.Chunks != cfg.StreamChunks {
		t.Errorf("stream history %+v vs %+v = %.4f: want %d prompts each, equal within 2%%", st.One, st.Many, st.HistoryRatio, cfg.StreamRuns)
	}
	if st.AnswerBytes != cfg.StreamAnswerBytes || len(st.TappedDeltas) != 2*cfg.StreamRuns {
		t.Errorf("stream answer %d B, tapped calls %v", st.AnswerBytes, st.TappedDeltas)
	}
	for i, d := range st.TappedDeltas {
		if want := []int{1, cfg.StreamChunks}[i%2]; d != want {
			t.Errorf("tapped call %d had %d deltas, want %d", i, d, want)
		}
	}
	if len(st.Levels) != 1+len(cfg.StreamConcurrency) {
		t.Fatalf("stream levels %+v", st.Levels)
	}
	for i, l := range st.Levels {
		calls := cfg.StreamRuns
		if i > 0 {
			calls = cfg.StreamConcurrency[i-1]
		}
		if l.Calls != calls || l.Deltas != calls*cfg.StreamChunks || l.Delay.N != l.Deltas ||
			l.LiveDelay.N+l.EndDelay.N != l.Deltas || l.TextBytes != calls*cfg.StreamAnswerBytes {
			t.Errorf("stream level %+v: want %d calls, each delta of each answer received once", l, calls)
		}
		// The follower cannot see a delta before the provider emitted it
		// (both stamps are this machine's wall clock).
		if l.LiveBytes <= 0 || l.LiveBytes > l.TextBytes || l.Delay.Min < 0 {
			t.Errorf("stream level N=%d: %d of %d bytes live, min delay %.1f ms: want some text before message_end and no delay below 0",
				l.N, l.LiveBytes, l.TextBytes, l.Delay.Min)
		}
		if l.HeartbeatsPerSec <= 0 || l.DescribesPerSec <= 0 {
			t.Errorf("stream level N=%d: %.2f heartbeats/s, %.2f Describe/s: want both counted", l.N, l.HeartbeatsPerSec, l.DescribesPerSec)
		}
		// Followed by `starter rpc` processes (their CPU read apart), and
		// the deltas add up to the answer.
		if l.Via != "rpc" || l.FollowerCores <= 0 || l.Error != "" || l.LiveBytes != l.TextBytes {
			t.Errorf("stream level N=%d: via %q, followers %.3f cores, error %q, %d of %d bytes live: want rpc followers and every byte as message_update",
				l.N, l.Via, l.FollowerCores, l.Error, l.LiveBytes, l.TextBytes)
		}
	}
	if len(st.Variants) != len(cfg.StreamVariants) {
		t.Fatalf("stream variants %+v, want %d", st.Variants, len(cfg.StreamVariants))
	}
	for _, v := range st.Variants {
		l := v.Level
		if l.Calls != cfg.StreamRuns || l.Deltas != cfg.StreamRuns*cfg.StreamChunks || l.LiveBytes <= 0 || l.HeartbeatsPerSec <= 0 {
			t.Errorf("stream variant %s: %+v: want every delta received and live text", v.Name, l)
		}
		if want := len(cfg.StreamConcurrency); v.Sweep && len(v.SweepLevels) != want {
			t.Errorf("stream variant %s swept %d levels, want %d", v.Name, len(v.SweepLevels), want)
		}
		for _, l := range v.SweepLevels {
			if l.Calls != l.N || l.Deltas != l.N*cfg.StreamChunks || l.LiveBytes <= 0 {
				t.Errorf("stream variant %s N=%d: %+v: want every delta received and live text", v.Name, l.N, l)
			}
		}
	}
	sg := st.Signals
	if sg.Signals != cfg.StreamSignals || sg.AddedBytes < sg.Signals*(cfg.StreamAnswerBytes/cfg.StreamChunks) ||
		sg.WorkflowTasks < 1 || sg.Ratio <= 1 {
		t.Errorf("stream signals %+v: want every signal's delta in history", sg)
	}
}

// Nearest-rank percentiles: p95 of 20 samples is the 19th smallest.
func TestDist_NearestRank(t *testing.T) {
	twenty := make([]float64, 20)
	for i := range twenty {
		twenty[i] = float64(20 - i) // 20..1, unsorted
	}
	cases := []struct {
		name          string
		in            []float64
		p50, p95, max float64
	}{
		{"empty", nil, 0, 0, 0},
		{"one", []float64{7}, 7, 7, 7},
		{"three", []float64{3, 1, 2}, 2, 3, 3},
		{"twenty", twenty, 10, 19, 20},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := dist(tc.in)
			if d.P50 != tc.p50 || d.P95 != tc.p95 || d.Max != tc.max || d.N != len(tc.in) {
				t.Errorf("dist(%v) = %+v, want p50 %v p95 %v max %v", tc.in, d, tc.p50, tc.p95, tc.max)
			}
		})
	}
}

// Each auto_retry_start pairs with the next agent_start; the lateness is
// what exceeds the announced delay.
func TestResumeLateness(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	evs := []agent.Event{
		{Type: agent.EventAgentStart, Seq: 1, Time: at(0)},
		{Type: agent.EventAutoRetryStart, Seq: 2, Time: at(10), DelayMs: 1000},
		{Type: agent.EventAgentStart, Seq: 3, Time: at(1040)},
		{Type: agent.EventAutoRetryStart, Seq: 4, Time: at(1100), DelayMs: 2000},
		{Type: agent.EventAgentStart, Seq: 5, Time: at(3105)},
	}
	got, err := resumeLateness(evs)
	if err != nil || len(got) != 2 || got[0] != 30 || got[1] != 5 {
		t.Fatalf("resumeLateness = %v, %v; want [30 5]", got, err)
	}
	if _, err := resumeLateness(evs[:4]); err == nil {
		t.Error("a retry without a following agent_start was accepted")
	}
}

// Bad command lines exit 2 before anything starts.
func TestRun_RejectsUnknownBenchmark(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"--only", "overhead,latency"}, &out, &errOut); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(errOut.String(), `unknown benchmark "latency"`) {
		t.Errorf("stderr %q", errOut.String())
	}
}
