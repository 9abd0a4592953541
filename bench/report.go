package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Dist summarises samples in milliseconds.
type Dist struct {
	N   int     `json:"n"`
	Min float64 `json:"minMs"`
	P50 float64 `json:"p50Ms"`
	P95 float64 `json:"p95Ms"`
	Max float64 `json:"maxMs"`
}

// dist computes a Dist; percentiles use the nearest-rank method, so p95 of
// 20 samples is the 19th smallest.
func dist(ms []float64) Dist {
	if len(ms) == 0 {
		return Dist{}
	}
	s := append([]float64(nil), ms...)
	sort.Float64s(s)
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[max(i, 0)]
	}
	return Dist{N: len(s), Min: s[0], P50: rank(0.50), P95: rank(0.95), Max: s[len(s)-1]}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Machine describes where the bench ran; the figures mean little without
// it on a shared, noisy machine.
type Machine struct {
	GOOS        string   `json:"goos"`
	GOARCH      string   `json:"goarch"`
	CPUs        int      `json:"cpus"`
	GoVersion   string   `json:"goVersion"`
	MemTotalMB  int64    `json:"memTotalMB,omitempty"`
	LoadBefore  string   `json:"loadAverageBefore,omitempty"`
	LoadAfter   string   `json:"loadAverageAfter,omitempty"`
	CodecOn     bool     `json:"codecOn"`
	Arguments   []string `json:"arguments"`
	DataDir     string   `json:"dataDir"`
	StartedAt   string   `json:"startedAt"`
	DurationSec float64  `json:"durationSec"`
}

func machine(args []string) Machine {
	m := Machine{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(),
		GoVersion: runtime.Version(), LoadBefore: loadAverage(), Arguments: args,
		StartedAt: time.Now().UTC().Format(time.RFC3339)}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		for _, line := range strings.Split(string(b), "\n") {
			if _, err := fmt.Sscanf(line, "MemTotal: %d kB", &kb); err == nil {
				m.MemTotalMB = kb / 1024
				break
			}
		}
	}
	return m
}

// loadAverage is the 1, 5 and 15 minute load average ("" off Linux).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// Row is one line of the results table.
type Row struct {
	Benchmark string `json:"benchmark"`
	Measured  string `json:"measured"`
	Target    string `json:"target"`
	// Verdict is "met", "missed" or "info" (no target).
	Verdict string `json:"verdict"`
}

// Report is everything one run measured.
type Report struct {
	Machine     Machine          `json:"machine"`
	Overhead    *OverheadResult  `json:"overhead,omitempty"`
	Abort       *AbortResult     `json:"abort,omitempty"`
	Timer       *TimerResult     `json:"timer,omitempty"`
	History     *HistoryResult   `json:"history,omitempty"`
	Tools       *ToolsResult     `json:"tools,omitempty"`
	Caching     *CachingResult   `json:"caching,omitempty"`
	Stream      *StreamResult    `json:"stream,omitempty"`
	Fanout      *FanoutResult    `json:"fanout,omitempty"`
	SubAgents   *SubAgentsResult `json:"subagents,omitempty"`
	Concurrency []ConcResult     `json:"concurrency,omitempty"`
	// Fleet is the coordinated-backoff benchmark (fleet.go).
	Fleet *FleetResult `json:"fleet,omitempty"`
	MCP   *MCPResult   `json:"mcp,omitempty"`
	// Checkpoint is the checkpoint store benchmark (checkpoint.go).
	Checkpoint *CheckpointResult `json:"checkpoint,omitempty"`
	// StartRetries counts workflow starts retried after a timeout (an
	// overloaded server).
	StartRetries int64             `json:"startRetries"`
	Rows         []Row             `json:"rows"`
	Errors       map[string]string `json:"errors,omitempty"`
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

// rows renders the results as table rows, in benchmark order.
func (r *Report) rows() []Row {
	var out []Row
	if o := r.Overhead; o != nil {
		out = append(out, Row{"overhead",
			fmt.Sprintf("prompt p50 %.1f ms / bare p50 %.1f ms = %.2fx (p95 %.1f / %.1f ms = %.2fx; n=%d each, interleaved)",
				o.Prompt.P50, o.Bare.P50, o.Ratio, o.Prompt.P95, o.Bare.P95, o.RatioP95, o.Prompt.N),
			"<= 1.3x", verdict(o.Ratio <= 1.3)})
	}
	if a := r.Abort; a != nil {
		out = append(out, Row{"abort latency",
			fmt.Sprintf("p50 %.1f ms, p95 %.1f ms, max %.1f ms (n=%d, %d ms backoff, client polls every %d ms)",
				a.Latency.P50, a.Latency.P95, a.Latency.Max, a.Latency.N, a.BackoffMs, a.PollMs),
			"p95 <= 100 ms (quiet machine)", verdict(a.Latency.P95 <= 100)})
	}
	if t := r.Timer; t != nil {
		out = append(out, Row{"timer accuracy",
			fmt.Sprintf("workflow resumed late by p50 %.1f ms, p95 %.1f ms (server timer alone p50 %.1f / p95 %.1f ms; from the announced auto_retry_start p50 %.1f / p95 %.1f ms; n=%d, delays %s)",
				t.Resume.P50, t.Resume.P95, t.Fire.P50, t.Fire.P95, t.Announced.P50, t.Announced.P95, t.Resume.N, t.Delays),
			"p95 <= 50 ms (quiet machine)", verdict(t.Resume.P95 <= 50)})
	}
	if h := r.History; h != nil && len(h.Points) > 0 {
		var parts []string
		for _, p := range h.Points {
			parts = append(parts, fmt.Sprintf("%d msgs: %d B", p.Messages, p.BytesPerCall))
		}
		first, last := h.Points[0], h.Points[len(h.Points)-1]
		out = append(out, Row{"history growth",
			fmt.Sprintf("bytes/call %s; %d vs %d msgs = %.3fx (messages %d B each way)",
				strings.Join(parts, ", "), last.Messages, first.Messages, h.Ratio, h.MessageBytes),
			"flat (<= 1.10x)", verdict(h.Ratio <= 1.10)})
	}
	if t := r.Tools; t != nil {
		out = append(out, t.rows()...)
	}
	if c := r.Caching; c != nil {
		out = append(out, c.rows()...)
	}
	if s := r.Stream; s != nil {
		out = append(out, s.rows()...)
	}
	if f := r.Fanout; f != nil {
		out = append(out, f.rows()...)
	}
	if a := r.SubAgents; a != nil {
		out = append(out, a.rows()...)
	}
	for _, c := range r.Concurrency {
		out = append(out, Row{fmt.Sprintf("concurrency N=%d rss", c.N),
			fmt.Sprintf("worker RSS %.0f MB with %d prompts in backoff (idle %.0f MB; peak %.0f MB during the throughput run); anonymous part %.0f MB (idle %.0f, peak %.0f)",
				c.HoldRSSMB, c.InBackoff, c.IdleRSSMB, c.PeakRSSMB, c.HoldAnonMB, c.IdleAnonMB, c.PeakAnonMB),
			rssTarget(c.N), rssVerdict(c)})
		out = append(out, throughputRow(fmt.Sprintf("concurrency N=%d throughput", c.N), c))
	}
	if f := r.Fleet; f != nil {
		out = append(out, f.row())
	}
	if m := r.MCP; m != nil {
		out = append(out, m.rows()...)
	}
	if c := r.Checkpoint; c != nil {
		out = append(out, c.rows()...)
	}
	return out
}

func throughputRow(name string, c ConcResult) Row {
	return Row{name,
		fmt.Sprintf("prompts %.1f/s (all done in %.1f s) vs bare %.1f/s (%.1f s) = %.3fx (%d ms backoff each; mean of %d alternating rounds)",
			c.PromptPerSec, c.PromptSec, c.BarePerSec, c.BareSec, c.Ratio, c.DelayMs, c.Rounds),
		throughputTarget(c.N), throughputVerdict(c)}
}

func rssTarget(n int) string {
	if n >= 500 {
		return "<= 300 MB at 500"
	}
	return "(target at 500)"
}

func rssVerdict(c ConcResult) string {
	if c.N < 500 {
		return "info"
	}
	return verdict(c.HoldRSSMB <= 300)
}

// writeTable prints the rows as a Markdown table, readable in a terminal
// and pasteable into bench/RESULTS.md.
func writeTable(w io.Writer, r *Report) {
	m := r.Machine
	fmt.Fprintf(w, "durable-agent bench, %s, %d CPUs, %s %s/%s, load %s -> %s, codec %v, %.0f s, data in %s, %d start retries\n\n",
		m.StartedAt, m.CPUs, m.GoVersion, m.GOOS, m.GOARCH, m.LoadBefore, m.LoadAfter, onOff(m.CodecOn), m.DurationSec,
		m.DataDir, r.StartRetries)
	fmt.Fprintln(w, "| benchmark | measured | target | verdict |")
	fmt.Fprintln(w, "|---|---|---|---|")
	for _, row := range r.Rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", row.Benchmark, row.Measured, row.Target, row.Verdict)
	}
	for name, err := range r.Errors {
		fmt.Fprintf(w, "\nerror in %s: %s\n", name, err)
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func writeJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}

func writeJSONFile(path string, r *Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write results: %w", err)
	}
	if err := writeJSON(f, r); err != nil {
		f.Close()
		return fmt.Errorf("write results to %s: %w", path, err)
	}
	return f.Close()
}

// rows renders the tools benchmark: history growth, output size, time per
// tool step.
func (t *ToolsResult) rows() []Row {
	sm, lg, lo := t.Small, t.Large, t.LargeOutput
	return []Row{
		{"tools history growth",
			fmt.Sprintf("bytes/tool call without the fault script: %d calls %d B, %d calls %d B = %.3fx "+
				"(with it, as stored: %d B vs %d B = %.2fx; the scripted model's %d-element script is in each run's input, each model call carries its element; "+
				"%d calls: %d runs, %d events, %.1f MB; outputs %d B)",
				sm.Calls, sm.NetBytesPerCall, lg.Calls, lg.NetBytesPerCall, t.GrowthRatio,
				sm.BytesPerCall, lg.BytesPerCall, t.GrowthRatioRaw, lg.Calls+1,
				lg.Calls, lg.Runs, lg.Events, float64(lg.Bytes)/1e6, lg.OutputBytes),
			"flat (<= 1.10x)", verdict(t.GrowthRatio <= 1.10)},
		{"tools output size",
			fmt.Sprintf("bytes/tool call without the fault script: %d B outputs %d B vs %d B outputs %d B = %.3fx "+
				"(with it: %d B vs %d B = %.3fx; %d calls each, %d and %d runs)",
				lo.OutputBytes, lo.NetBytesPerCall, lg.OutputBytes, lg.NetBytesPerCall, t.OutputRatio,
				lo.BytesPerCall, lg.BytesPerCall, t.OutputRatioRaw, lg.Calls, lo.Runs, lg.Runs),
			"0.90x-1.10x", verdict(t.OutputRatio >= 0.9 && t.OutputRatio <= 1.1)},
		{"tools step cost",
			fmt.Sprintf("per tool step (model call + tool call) %.1f ms = (%d calls %.0f ms - %d calls %.0f ms) / %d; "+
				"bare activity round trip %.1f ms = (%d activities %.0f ms - %d activities %.0f ms) / %d; "+
				"step / 2 bare round trips = %.2fx (means of %d interleaved rounds); server side per call of the %d-call prompt: %s",
				t.StepMs, lg.Calls, t.PromptLargeMs, sm.Calls, t.PromptSmallMs, lg.Calls-sm.Calls,
				t.BareActivityMs, t.BareLargeActivities, t.BareLargeMs, t.BareSmallActivities, t.BareSmallMs,
				t.BareLargeActivities-t.BareSmallActivities, t.StepRatio, t.Rounds, lg.Calls, lg.perCall()),
			"(none: 1.0x is Temporal's own cost)", "info"},
	}
}

func throughputTarget(n int) string {
	if n >= 500 {
		return ">= 0.9x bare at 500"
	}
	return "(target at 500)"
}

func throughputVerdict(c ConcResult) string {
	if c.N < 500 {
		return "info"
	}
	return verdict(c.Ratio >= 0.9)
}
