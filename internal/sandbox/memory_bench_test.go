package sandbox

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/tools"
)

// BenchmarkSandbox_MemoryPerIdleSandbox starts 10 sandboxes each running
// `sleep 30`, then reports the memory of their processes (bwrap, its
// init, the shell and sleep; with "limits", the shell that sets the
// rlimits too) per sandbox: Pss (shared pages split among their users,
// the fair share) and Rss (shared pages counted in full):
//
//	go test ./internal/sandbox -run '^$' -bench MemoryPerIdle -benchtime 1x
func BenchmarkSandbox_MemoryPerIdleSandbox(b *testing.B) {
	b.Run("defaults", func(b *testing.B) { benchMemoryPerIdle(b, Config{}) })
	b.Run("limits", func(b *testing.B) { benchMemoryPerIdle(b, Config{CPUSeconds: 600, MemoryMB: 4096}) })
}

func benchMemoryPerIdle(b *testing.B, c Config) {
	const n = 10
	r, err := New(c)
	if err != nil {
		b.Fatal(err)
	}
	if err := r.Probe(); err != nil {
		b.Skipf("bubblewrap unusable here: %v", err)
	}
	ws := b.TempDir()
	for i := 0; i < b.N; i++ {
		var procs []tools.Process
		for range n {
			p, err := r.Start(tools.Command{Script: "sleep 30", Dir: ws, Env: []string{"PATH=/usr/bin:/bin"}, Output: &bytes.Buffer{}})
			if err != nil {
				b.Fatal(err)
			}
			procs = append(procs, p)
		}
		time.Sleep(time.Second) // all started and idle
		var roots []int
		for _, p := range procs {
			roots = append(roots, p.(*process).cmd.Process.Pid)
		}
		pss, rss, count := treeMemory(roots)
		for _, p := range procs {
			p.Kill()
			_, _ = p.Wait()
		}
		load, _ := os.ReadFile("/proc/loadavg")
		b.ReportMetric(float64(pss)/n/1024, "MiB-Pss/sandbox")
		b.ReportMetric(float64(rss)/n/1024, "MiB-Rss/sandbox")
		b.ReportMetric(float64(count)/n, "processes/sandbox")
		b.Logf("load average: %s", strings.TrimSpace(string(load)))
	}
}

// treeMemory sums Pss and Rss (KiB, /proc/PID/smaps_rollup) of roots and
// all their descendants.
func treeMemory(roots []int) (pss, rss int64, count int) {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// ppid is the 2nd field after the ")" that ends the command name.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) > 1 {
			ppid, _ := strconv.Atoi(f[1])
			children[ppid] = append(children[ppid], pid)
		}
	}
	queue := append([]int(nil), roots...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = append(queue[1:], children[pid]...)
		count++
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) < 2 {
				continue
			}
			v, _ := strconv.ParseInt(f[1], 10, 64)
			switch f[0] {
			case "Pss:":
				pss += v
			case "Rss:":
				rss += v
			}
		}
	}
	return pss, rss, count
}
