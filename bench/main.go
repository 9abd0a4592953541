// Command bench measures the durable agent on the embedded Temporal server
// with the scripted model at zero latency:
//
//	go -C bench run . [--json] [--json-file FILE] [--quick] [--dir DIR] [--only overhead,abort,timer,history,tools,stream,fanout,subagents,concurrency,fleet,caching,mcp,checkpoint]
//
// from the repository's root (or `go run .` in bench/). The bench is a Go
// module of its own that uses the product of this checkout (its go.mod's
// replace), so the product's `go test ./...` neither builds nor runs it.
//
// Every figure that depends on the machine is a ratio or a lateness
// measured in the same run against a baseline on the same server and
// worker (Bare: one no-op activity), interleaved, because a
// shared machine is noisy. Benchmarks:
//
//   - overhead: end-to-end latency of a fault-free prompt over that of the
//     bare workflow (target <= 1.3x);
//   - abort: abort_retry sent during an 8 s backoff until the client sees
//     auto_retry_end{finalError: "Retry cancelled"} (target p95 <= 100 ms
//     on a quiet machine: a regression guard);
//   - timer: how late a retry resumes after its backoff (p95 <= 50 ms on
//     a quiet machine);
//   - history: Temporal history bytes per model call as one conversation
//     grows from 10 to 500 messages of 2 KB (target: flat);
//   - tools: one prompt of 1000 bash calls (scripted model, zero
//     latency): history bytes per tool call at 10 vs 1000 calls (target:
//     flat) and with 50 KB vs 100 B outputs (target: within 10%), and the
//     time per tool step (a model call and a tool call) over two round
//     trips of a bare activity (Bare with 2000 activities);
//   - stream: live output through heartbeat details: history bytes per
//     model call for the same 4 KB answer in 1 and in 400 deltas (target:
//     equal within 2%), the delay from a delta leaving the provider to
//     control.Follow's callback (target p95 <= 300 ms), heartbeat RPCs,
//     CPU, a sweep of concurrent streaming prompts, and the history the
//     same deltas cost as signals into a workflow (the alternative);
//   - fanout: followers sharing one reader per prompt in a process: RPCs
//     per prompt with 1 vs 10 followers (target: equal), 100 prompts
//     streaming with 2 followers each (target p95 <= 300 ms), stalls
//     longer than 5 s in 20 rounds (target 0);
//   - subagents: a parent fanning out to 50 sub-agents (task calls of one
//     answer) against 50 independent prompts at once: wall time and the
//     history per sub-agent;
//   - concurrency: worker RSS with N prompts in backoff at once, and the
//     throughput of N prompts started at once against N bare runs of the
//     same shape (targets: RSS <= 300 MB at 500, throughput >= 0.9x);
//   - fleet: 200 prompts on one credential while the scripted provider
//     answers 429 with retry-after 5 for 30 s: the calls made during the
//     limit with coordinated backoff vs without (goal: about one probe
//     per window), all 200 completing in both (fleet.go);
//   - caching: the input tokens billed over a 30-turn job with the
//     Anthropic wire format, with and without prompt caching, by
//     Anthropic's cache accounting (caching.go);
//   - mcp: an MCP tool call of a stdio server already running, through
//     the worker's MCP client against the official SDK's direct call,
//     and per call in a prompt against the same prompt's read calls
//     (mcp.go).
//   - checkpoint: internal/checkpoint's Take on a repository of more than
//     10,000 files, unchanged and with one file changed, against a
//     sandboxed bash step, and the store's growth over 100 turns
//     (checkpoint.go).
//
// It prints a Markdown table (or JSON with --json) on stdout and progress on
// stderr; the latest full run is kept in bench/RESULTS.md. Workers run in
// child processes (this binary, re-executed), one per benchmark.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
)

// Benchmarks, in the order they run.
var benchmarks = []string{"overhead", "abort", "timer", "history", "tools", "stream", "fanout", "subagents", "concurrency", "fleet", "caching", "mcp", "checkpoint"}

// Config sizes a run.
type Config struct {
	// Only lists the benchmarks to run (nil: all).
	Only []string

	OverheadRuns   int
	OverheadWarmup int

	AbortRuns      int
	AbortBackoffMs int64

	TimerRuns        int
	TimerFaults      int
	TimerBaseDelayMs int64

	// HistoryCheckpoints are conversation sizes (even numbers of
	// messages) at which a prompt's history is measured.
	HistoryCheckpoints []int
	MessageBytes       int

	// ToolsCalls is the number of bash calls of the tools benchmark's long
	// prompts, ToolsSmallCalls that of its short ones (the baseline of
	// the growth ratio and of the time per step); ToolsRounds how often
	// the timed pairs are repeated. ToolsContinueAsNewEvents is the
	// prompts' agent.continueAsNewEvents (0: the workflow's default).
	ToolsCalls               int
	ToolsSmallCalls          int
	ToolsRounds              int
	ToolsContinueAsNewEvents int

	// StreamAnswerBytes is the stream benchmark's answer, streamed in
	// StreamChunks words at StreamDelayMs per word (0: the setting's
	// default). StreamRuns prompts of each chunking measure the history
	// and the delay of one prompt streaming alone; StreamConcurrency are
	// the sweep's numbers of prompts streaming at once. StreamSignals of
	// the chunks are sent as signals for the alternative design.
	// StreamIdle is how long the idle CPU is measured. StreamVariants
	// are other configurations of the stream path, each measured with
	// StreamRuns prompts streaming alone on a worker of its own.
	StreamAnswerBytes int
	StreamChunks      int
	StreamDelayMs     int64
	StreamRuns        int
	StreamConcurrency []int
	StreamSignals     int
	StreamIdle        time.Duration
	StreamVariants    []StreamVariant

	// The fanout benchmark (bench/fanout.go): FanoutRatioPrompts prompts
	// with 1 and with 10 followers each, FanoutRounds rounds of
	// FanoutRoundPrompts prompts with 2 followers each (stalls), and
	// FanoutPrompts prompts with FanoutFollowers followers each.
	FanoutRatioPrompts int
	FanoutRounds       int
	FanoutRoundPrompts int
	FanoutPrompts      int
	FanoutFollowers    int
	// FanoutHeartbeats runs the fanout benchmark's worker without the
	// push path (stream.push off): followers read the heartbeats.
	FanoutHeartbeats bool

	// SubAgentsN is the subagents benchmark's number of sub-agents of one
	// parent, and of independent prompts it is compared with.
	SubAgentsN int

	ConcurrencyN       []int
	ConcurrencyDelayMs int64
	// ConcurrencyRounds is how many alternating rounds of a bare batch and
	// a prompt batch the throughput is the mean of.
	ConcurrencyRounds int

	// FleetJobs prompts on one credential meet a 429 with retry-after 5
	// for FleetLimit (the fleet benchmark, fleet.go).
	FleetJobs  int
	FleetLimit time.Duration
	// FleetOffFirst runs the fleet benchmark's side without coordination
	// first (the default runs it second), to tell an order effect (the
	// server's state, the machine's load) from the coordination's cost.
	FleetOffFirst bool

	// MCPRuns calls of the mcp benchmark are made each way; MCPRounds
	// pairs of prompts of MCPCalls calls each are timed.
	MCPRuns   int
	MCPRounds int
	MCPCalls  int
	// The checkpoint benchmark (bench/checkpoint.go): CheckpointTree is the
	// directory of the toolchain's src/ it records ("": all of src/),
	// CheckpointRounds the Takes of each kind, CheckpointTurns the turns of
	// the store's growth; CheckpointToolTurns the bash turns of each prompt
	// that measures a checkpoint in a tool turn, once per scripted model
	// latency of CheckpointModelMs.
	CheckpointTree      string
	CheckpointRounds    int
	CheckpointTurns     int
	CheckpointToolTurns int
	CheckpointModelMs   []int64

	// Dir is where the run's temporary directory (the server's SQLite
	// file, the worker's sessions) is made ("": the system's temp dir).
	Dir string

	// Log receives progress lines (nil: none).
	Log io.Writer
}

// FullConfig is the configuration of a real run.
func FullConfig() Config {
	return Config{
		OverheadRuns: 30, OverheadWarmup: 3,
		AbortRuns: 20, AbortBackoffMs: 8000,
		TimerRuns: 10, TimerFaults: 2, TimerBaseDelayMs: 1000,
		HistoryCheckpoints: []int{10, 50, 100, 250, 500}, MessageBytes: 2048,
		ToolsCalls: 1000, ToolsSmallCalls: 10, ToolsRounds: 2,
		StreamAnswerBytes: 4096, StreamChunks: 400, StreamRuns: 3, StreamConcurrency: []int{4, 16, 32, 48},
		StreamSignals: 400, StreamIdle: 3 * time.Second,
		StreamVariants: []StreamVariant{
			{Name: "follow-beat-clock", InProcess: true, Sweep: true},
			{Name: "follow-every-poll", InProcess: true, FixedReadMs: 100, Sweep: true},
			{Name: "interval150", IntervalMs: 150},
		},
		FanoutRatioPrompts: 4, FanoutRounds: 20, FanoutRoundPrompts: 16, FanoutPrompts: 100, FanoutFollowers: 2,
		SubAgentsN:   50,
		ConcurrencyN: []int{100, 500}, ConcurrencyDelayMs: 2000, ConcurrencyRounds: 2,
		FleetJobs: 200, FleetLimit: 30 * time.Second,
		MCPRuns: 500, MCPRounds: 3, MCPCalls: 50,
		CheckpointRounds: 40, CheckpointTurns: 100, CheckpointToolTurns: 40, CheckpointModelMs: []int64{0, 1000},
	}
}

// QuickConfig is a smoke run: every benchmark, tiny sizes (about a
// minute). Its figures are not meant to be compared with the targets.
func QuickConfig() Config {
	return Config{
		OverheadRuns: 5, OverheadWarmup: 1,
		AbortRuns: 3, AbortBackoffMs: 8000,
		TimerRuns: 3, TimerFaults: 1, TimerBaseDelayMs: 1000,
		HistoryCheckpoints: []int{10, 20}, MessageBytes: 2048,
		// A low continue-as-new threshold makes the 20 calls span
		// several runs, so the chain is followed; the 5 short ones (about
		// 25 events a call with the turn's checkpoint) stay in one.
		ToolsCalls: 20, ToolsSmallCalls: 5, ToolsRounds: 1, ToolsContinueAsNewEvents: 200,
		// The answer keeps its 400 chunks (the history ratio is checked),
		// streamed fast.
		StreamAnswerBytes: 4096, StreamChunks: 400, StreamDelayMs: 2, StreamRuns: 1, StreamConcurrency: []int{2},
		StreamSignals: 50, StreamIdle: 500 * time.Millisecond,
		StreamVariants:     []StreamVariant{{Name: "follow-every-poll", InProcess: true, FixedReadMs: 100, Sweep: true}},
		FanoutRatioPrompts: 1, FanoutRounds: 2, FanoutRoundPrompts: 2, FanoutPrompts: 4, FanoutFollowers: 2,
		SubAgentsN:   4,
		ConcurrencyN: []int{10}, ConcurrencyDelayMs: 2000, ConcurrencyRounds: 1,
		FleetJobs: 20, FleetLimit: 10 * time.Second,
		MCPRuns: 20, MCPRounds: 1, MCPCalls: 5,
		CheckpointTree: "net/http", CheckpointRounds: 3, CheckpointTurns: 5, CheckpointToolTurns: 4, CheckpointModelMs: []int64{0},
	}
}

func (c Config) runs(name string) bool {
	if len(c.Only) == 0 {
		return true
	}
	for _, o := range c.Only {
		if o == name {
			return true
		}
	}
	return false
}

func main() {
	if child, code := runChildIfAsked(); child {
		os.Exit(code)
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("bench", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the results as JSON instead of a table")
	jsonFile := fs.String("json-file", "", "also write the JSON results to this `file`")
	dir := fs.String("dir", "", "make the run's temporary `directory` (server database, sessions) here; e.g. /dev/shm takes the disk's fsync cost out")
	quick := fs.Bool("quick", false, "tiny sizes: a smoke run of about a minute")
	only := fs.StringSlice("only", nil, "run only these benchmarks: "+strings.Join(benchmarks, ","))
	concN := fs.IntSlice("concurrency-n", nil, "the concurrency benchmark's numbers of prompts at once (default 100,500; --quick 10)")
	fanN := fs.Int("fanout-prompts", 0, "the fanout benchmark's number of prompts streaming at once, 2 followers each (default 100; --quick 4)")
	fanBeats := fs.Bool("fanout-heartbeats", false, "the fanout benchmark's worker without the push path (stream.push off): followers read heartbeats")
	fanRounds := fs.Int("fanout-rounds", 0, "the fanout benchmark's rounds of the stall count (default 20; --quick 2)")
	fleetOffFirst := fs.Bool("fleet-off-first", false, "the fleet benchmark runs its side without coordinated backoff first")
	if err := fs.Parse(args); err != nil {
		if err == pflag.ErrHelp {
			return 0
		}
		return 2
	}
	cfg := FullConfig()
	if *quick {
		cfg = QuickConfig()
	}
	for _, o := range *only {
		if !contains(benchmarks, o) {
			fmt.Fprintf(stderr, "bench: unknown benchmark %q (known: %s)\n", o, strings.Join(benchmarks, ", "))
			return 2
		}
	}
	cfg.Only, cfg.Log, cfg.Dir = *only, stderr, *dir
	if len(*concN) > 0 {
		cfg.ConcurrencyN = *concN
	}
	if *fanN > 0 {
		cfg.FanoutPrompts = *fanN
	}
	cfg.FanoutHeartbeats = *fanBeats
	cfg.FleetOffFirst = *fleetOffFirst
	if *fanRounds > 0 {
		cfg.FanoutRounds = *fanRounds
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := Run(ctx, cfg, append([]string{"bench"}, args...))
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	if *jsonFile != "" {
		if err := writeJSONFile(*jsonFile, rep); err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 1
		}
	}
	if *asJSON {
		if err := writeJSON(stdout, rep); err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 1
		}
	} else {
		writeTable(stdout, rep)
	}
	if len(rep.Errors) > 0 {
		return 1
	}
	return 0
}

// Run starts the embedded server and runs the configured benchmarks. A
// benchmark that fails is recorded in Report.Errors and the others still
// run; only a server that does not start is an error.
func Run(ctx context.Context, cfg Config, args []string) (*Report, error) {
	started := time.Now()
	rep := &Report{Machine: machine(args)}
	h, err := newHarness(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer h.close()
	rep.Machine.CodecOn = h.codec
	fail := func(name string, err error) {
		if rep.Errors == nil {
			rep.Errors = map[string]string{}
		}
		rep.Errors[name] = err.Error()
		h.logf("%s failed: %v", name, err)
	}
	steps := []struct {
		name string
		run  func() error
	}{
		{"overhead", func() (err error) { rep.Overhead, err = h.overhead(ctx); return }},
		{"abort", func() (err error) { rep.Abort, err = h.abort(ctx); return }},
		{"timer", func() (err error) { rep.Timer, err = h.timer(ctx); return }},
		{"history", func() (err error) { rep.History, err = h.historyGrowth(ctx); return }},
		{"tools", func() (err error) { rep.Tools, err = h.toolsBench(ctx); return }},
		{"stream", func() (err error) { rep.Stream, err = h.streamBench(ctx); return }},
		{"fanout", func() (err error) { rep.Fanout, err = h.fanoutBench(ctx); return }},
		{"subagents", func() (err error) { rep.SubAgents, err = h.subagents(ctx); return }},
		{"concurrency", func() (err error) { rep.Concurrency, err = h.concurrency(ctx); return }},
		{"fleet", func() (err error) { rep.Fleet, err = h.fleet(ctx); return }},
		{"caching", func() (err error) { rep.Caching, err = h.cachingBench(ctx); return }},
		{"mcp", func() (err error) { rep.MCP, err = h.mcpBench(ctx); return }},
		{"checkpoint", func() (err error) { rep.Checkpoint, err = h.checkpointBench(ctx); return }},
	}
	for _, st := range steps {
		if !cfg.runs(st.name) {
			continue
		}
		if ctx.Err() != nil {
			fail(st.name, ctx.Err())
			continue
		}
		h.logf("%s: start (load %s)", st.name, loadAverage())
		if err := st.run(); err != nil {
			fail(st.name, err)
		}
	}
	rep.StartRetries = h.startRetries.Load()
	rep.Machine.DataDir = h.dir
	rep.Rows = rep.rows()
	rep.Machine.LoadAfter = loadAverage()
	rep.Machine.DurationSec = time.Since(started).Seconds()
	return rep, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
