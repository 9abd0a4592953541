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

// modelTurn is the pause before each run of calls: the model's turn
// between two answers (the same pause as activities'
// BenchmarkToolStep_BashTrueSandboxedVsLocal).
const modelTurn = 300 * time.Millisecond

// BenchmarkBashTrue_SandboxedVsLocal runs the bash tool's `true` b.N
// times in the sandbox and b.N times unsandboxed (tools.Local),
// interleaved so both see the same machine load, and reports the ratio
// of their mean times (issue 22's budget: 1.3x) and the load average.
// "defaults" is the sandbox of the default settings; "limits" one with
// tools.sandbox.cpuSeconds and memoryMB set, which adds the shell that
// sets them; "allowlist" one with network allowlist (an egress proxy per
// sandbox); each call after a model turn. "back-to-back" ones call with
// no pause at all, sandboxed and unsandboxed calls taking turns in runs
// of benchRun; "answers" ones as the tool calls of answers run: a model
// turn, then benchRun calls back to back:
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
	b.Run("limits", func(b *testing.B) { benchBashTrue(b, Config{CPUSeconds: 600, MemoryMB: 4096}, modelTurn, 1) })
	b.Run("allowlist", func(b *testing.B) { benchBashTrue(b, allowlist, modelTurn, 1) })
	b.Run("back-to-back", func(b *testing.B) { benchBashTrue(b, Config{}, 0, benchRun) })
	b.Run("back-to-back-allowlist", func(b *testing.B) { benchBashTrue(b, allowlist, 0, benchRun) })
	b.Run("answers", func(b *testing.B) { benchBashTrue(b, Config{}, modelTurn, benchRun) })
	b.Run("answers-allowlist", func(b *testing.B) { benchBashTrue(b, allowlist, modelTurn, benchRun) })
}

// benchBashTrue measures calls of `true` in a sandbox of c against
// unsandboxed ones, in runs of burst calls one after another, each run
// after pause; the kinds take turns run by run.
func benchBashTrue(b *testing.B, c Config, pause time.Duration, burst int) {
	r, err := New(c)
	if err != nil {
		b.Fatal(err)
	}
	if err := r.Probe(); err != nil {
		b.Skipf("bubblewrap unusable here: %v", err)
	}
	ws := b.TempDir()
	run := func(rn tools.Runner) time.Duration {
		start := time.Now()
		res := bash(b, rn, ws, "true", 0)
		d := time.Since(start)
		if res.IsError {
			b.Fatalf("bash true: %+v", res)
		}
		return d
	}
	b.ResetTimer()
	var sandboxed, local time.Duration
	pos := make([]time.Duration, burst)
	for i := 0; i < b.N; i += burst {
		n := min(burst, b.N-i)
		time.Sleep(pause)
		for j := 0; j < n; j++ {
			d := run(r)
			sandboxed += d
			pos[j] += d
		}
		time.Sleep(pause)
		for j := 0; j < n; j++ {
			local += run(tools.Local)
		}
	}
	b.StopTimer()
	load, _ := os.ReadFile("/proc/loadavg")
	b.ReportMetric(float64(sandboxed)/float64(local), "sandboxed/local")
	b.ReportMetric(float64(sandboxed.Microseconds())/float64(b.N)/1000, "ms/sandboxed")
	b.ReportMetric(float64(local.Microseconds())/float64(b.N)/1000, "ms/local")
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
