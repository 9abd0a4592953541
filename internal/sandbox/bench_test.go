package sandbox

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/egress"
	"github.com/durableagent/durableagent/internal/tools"
)

// modelTurn is the pause before each call: the model's turn between two
// tool calls (seconds in practice), in which the runner starts the
// workspace's next sandbox ahead (the same pause as activities'
// BenchmarkToolStep_BashTrueSandboxedVsLocal).
const modelTurn = 300 * time.Millisecond

// BenchmarkBashTrue_SandboxedVsLocal runs the bash tool's `true` b.N
// times in the sandbox and b.N times unsandboxed (tools.Local),
// interleaved so both see the same machine load, each call after a
// pause (modelTurn) or none, and reports the ratio of their mean times
// (issue 22's budget: 1.3x), the share of calls a sandbox started ahead
// ran, and the load average. "defaults" is the sandbox of the default
// settings; "cold" the same with no sandbox started ahead (each call
// starts its own); "limits" one with tools.sandbox.cpuSeconds and
// memoryMB set, which adds the shell that sets them; "allowlist" one
// with network allowlist (an egress proxy per sandbox); "back-to-back"
// ones call with no pause at all, sandboxed and unsandboxed calls taking
// turns in runs of benchRun; "answers" ones as the tool calls of answers
// run: a model turn, then benchRun calls back to back; "first-call" ones
// each run's calls in a new workspace (a new session's first answer: no
// spare), the "-hinted" ones with the worker's hint as the model turn
// starts (Runner.Prepare, which the CallModel activity gives), and the
// "answers-short-allowlist" ones after a model turn of shortTurn, too
// short for the refill after the quiet to have the spares' egress
// proxies ready (all sandboxed runs first, then the unsandboxed ones):
//
//	go test ./internal/sandbox -run '^$' -bench BashTrue -benchtime 30x
func BenchmarkBashTrue_SandboxedVsLocal(b *testing.B) {
	allow, err := egress.ParseAllowList([]string{"registry.example"})
	if err != nil {
		b.Fatal(err)
	}
	allowlist := Config{Network: NetworkAllowlist, Egress: egress.Options{Allow: allow,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	b.Run("defaults", func(b *testing.B) { benchBashTrue(b, Config{}, modelTurn, 1) })
	b.Run("cold", func(b *testing.B) { benchBashTrue(b, Config{AheadIdle: -1}, modelTurn, 1) })
	b.Run("limits", func(b *testing.B) { benchBashTrue(b, Config{CPUSeconds: 600, MemoryMB: 4096}, modelTurn, 1) })
	b.Run("allowlist", func(b *testing.B) { benchBashTrue(b, allowlist, modelTurn, 1) })
	b.Run("back-to-back", func(b *testing.B) { benchBashTrue(b, Config{}, 0, benchRun) })
	b.Run("back-to-back-cold", func(b *testing.B) { benchBashTrue(b, Config{AheadIdle: -1}, 0, benchRun) })
	b.Run("back-to-back-allowlist", func(b *testing.B) { benchBashTrue(b, allowlist, 0, benchRun) })
	b.Run("answers", func(b *testing.B) { benchBashTrue(b, Config{}, modelTurn, benchRun) })
	b.Run("answers-cold", func(b *testing.B) { benchBashTrue(b, Config{AheadIdle: -1}, modelTurn, benchRun) })
	b.Run("answers-allowlist", func(b *testing.B) { benchBashTrue(b, allowlist, modelTurn, benchRun) })
	// Spares of the workspaces done with end soon: they would hold the
	// runner's bound (maxSpares) against the new ones.
	fresh := Config{AheadIdle: time.Second}
	b.Run("first-call", func(b *testing.B) { benchBashTrue(b, fresh, modelTurn, 1, benchFresh) })
	b.Run("first-call-hinted", func(b *testing.B) { benchBashTrue(b, fresh, modelTurn, 1, benchFresh|benchHint) })
	b.Run("first-answer", func(b *testing.B) { benchBashTrue(b, fresh, modelTurn, benchRun, benchFresh) })
	b.Run("first-answer-hinted", func(b *testing.B) { benchBashTrue(b, fresh, modelTurn, benchRun, benchFresh|benchHint) })
	b.Run("answers-short-allowlist", func(b *testing.B) { benchBashTrue(b, allowlist, shortTurn, benchRun, benchBlocks) })
	b.Run("answers-short-allowlist-hinted", func(b *testing.B) {
		benchBashTrue(b, allowlist, shortTurn, benchRun, benchBlocks|benchHint)
	})
}

// shortTurn is a model turn just longer than refillQuiet: the refill
// after the quiet starts within it, the spares' proxies are not ready.
const shortTurn = 120 * time.Millisecond

// benchMode is how a benchmark's sandboxed runs go: benchFresh, each in
// a new workspace; benchHint, with the hint of a model call's start
// (Runner.Prepare) before its model turn; benchBlocks, all of them one
// after another (each after its pause), then the unsandboxed ones, so
// that only a model turn lies between two sandboxed runs.
type benchMode int

const (
	benchFresh benchMode = 1 << iota
	benchHint
	benchBlocks
)

// benchBashTrue measures calls of `true` in a sandbox of c against
// unsandboxed ones, in runs of burst calls one after another, each run
// after pause; the kinds take turns run by run.
func benchBashTrue(b *testing.B, c Config, pause time.Duration, burst int, modes ...benchMode) {
	var mode benchMode
	for _, m := range modes {
		mode |= m
	}
	r, err := New(c)
	if err != nil {
		b.Fatal(err)
	}
	if err := r.Probe(); err != nil {
		b.Skipf("bubblewrap unusable here: %v", err)
	}
	defer r.Close()
	ws := b.TempDir()
	sandboxWs := ws
	run := func(rn tools.Runner) time.Duration {
		ws := ws
		if rn == r {
			ws = sandboxWs
		}
		start := time.Now()
		res := bash(b, rn, ws, "true", 0)
		d := time.Since(start)
		if res.IsError {
			b.Fatalf("bash true: %+v", res)
		}
		return d
	}
	// One run first, so that the runner's pool is sized as the runs'.
	for j := 0; j < burst; j++ {
		run(r)
	}
	for j := 0; j < burst; j++ {
		run(tools.Local)
	}
	time.Sleep(modelTurn) // the first spares, whatever the pause
	served := r.spares.served.Load()
	b.ResetTimer()
	var sandboxed, local time.Duration
	pos := make([]time.Duration, burst)
	sandboxedRun := func(n int) {
		if mode&benchFresh != 0 {
			sandboxWs = b.TempDir()
		}
		if mode&benchHint != 0 {
			r.Prepare(sandboxWs, benchEnv(sandboxWs))
		}
		time.Sleep(pause)
		for j := 0; j < n; j++ {
			d := run(r)
			sandboxed += d
			pos[j] += d
		}
	}
	localRun := func(n int) {
		time.Sleep(pause)
		for j := 0; j < n; j++ {
			local += run(tools.Local)
		}
	}
	for i := 0; i < b.N; i += burst {
		sandboxedRun(min(burst, b.N-i))
		if mode&benchBlocks == 0 {
			localRun(min(burst, b.N-i))
		}
	}
	for i := 0; mode&benchBlocks != 0 && i < b.N; i += burst {
		localRun(min(burst, b.N-i))
	}
	b.StopTimer()
	load, _ := os.ReadFile("/proc/loadavg")
	b.ReportMetric(float64(sandboxed)/float64(local), "sandboxed/local")
	b.ReportMetric(float64(sandboxed.Microseconds())/float64(b.N)/1000, "ms/sandboxed")
	b.ReportMetric(float64(local.Microseconds())/float64(b.N)/1000, "ms/local")
	b.ReportMetric(float64(r.spares.served.Load()-served)/float64(b.N), "ahead/sandboxed")
	if burst > 1 {
		ms := make([]string, burst)
		for j, d := range pos {
			ms[j] = fmt.Sprintf("%.1f", float64(d.Microseconds())/1000/float64((b.N+burst-1-j)/burst))
		}
		b.Logf("sandboxed ms by place in the run: %s", strings.Join(ms, " "))
	}
	b.Logf("load average: %s", strings.TrimSpace(string(load)))
}

// benchRun is how many calls of one kind run one after another.
const benchRun = 5
