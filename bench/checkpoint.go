package main

// The checkpoint benchmark (issue 42): the cost of internal/checkpoint's
// Take on a real repository of more than 10,000 files (the Go
// distribution's src/ of this machine's toolchain, copied into the run's
// directory and committed to a git repository of its own), against the
// cost of a tool step that runs bash `true` in the sandbox (the tools
// runner, default sandbox settings), measured interleaved in the same run:
//
//   - Take when nothing changed, and when one file changed (an append to a
//     different file each time): p50/p95, and the p95 over the bash step's
//     p50 (goal: p95 <= 50 ms and <= 10% of a bash step);
//   - the store's size on disk before and after 100 turns of small edits
//     (one line appended to one file a turn), and per turn;
//   - what a checkpoint adds to a tool turn as the product runs it: prompts
//     of bash calls that each append a line to a file of the repository,
//     through a worker, checkpoints off and on, at each scripted model
//     latency; from history event times, the time from the model call's
//     completion to its bash call's scheduling (the checkpoint is taken
//     while the model answers, docs/spec.md 20.1, and the call waits for
//     it), and the bash call's activity from scheduled to completed.

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/checkpoint"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/sandbox"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/tools"
)

// CheckpointResult is what the checkpoint benchmark measured.
type CheckpointResult struct {
	Repo  string `json:"repo"`
	Files int    `json:"files"`
	// FirstMs is the first Take of the repository (every file hashed).
	FirstMs   float64 `json:"firstMs"`
	Unchanged Dist    `json:"unchanged"`
	OneFile   Dist    `json:"oneFile"`
	// UnchangedCPU and OneFileCPU are the CPU time (user + system) of the
	// git processes of those Takes: what a busy machine does not inflate.
	UnchangedCPU Dist `json:"unchangedCpu"`
	OneFileCPU   Dist `json:"oneFileCpu"`
	BashTrue     Dist `json:"bashTrue"`
	// Ratio is OneFile.P95 / BashTrue.P50.
	Ratio float64 `json:"ratio"`
	Turns int     `json:"turns"`
	// StoreBefore and StoreAfter are the store's bytes on disk before and
	// after Turns turns of one small edit each.
	StoreBefore int64  `json:"storeBefore"`
	StoreAfter  int64  `json:"storeAfter"`
	Load        string `json:"load"`
	// InTurn is the tool-turn measurement, per model latency.
	InTurn []CheckpointTurn `json:"inTurn"`
}

// CheckpointTurn is what a checkpoint adds to a tool turn at one scripted
// model latency: the answer-to-call gap with checkpoints off and on, and
// the bash step (its activity, scheduled to completed) with them on.
type CheckpointTurn struct {
	ModelMs int64 `json:"modelMs"`
	Off     Dist  `json:"off"`
	// Changed and Unchanged are the gaps with checkpoints on of the turns
	// after one that appended a line to a file, and after a bash `true`.
	Changed   Dist `json:"changed"`
	Unchanged Dist `json:"unchanged"`
	Step      Dist `json:"step"`
	// Added is the larger of Changed.P95 and Unchanged.P95 less Off.P95;
	// Ratio is Added over Step.P50; FirstMs the gap of the session's first
	// turn with checkpoints on (left out: its first checkpoint).
	Added   float64 `json:"added"`
	FirstMs float64 `json:"firstMs"`
	Ratio   float64 `json:"ratio"`
}

const sizeEveryTakes = 10 // internal/checkpoint's size check

func (h *harness) checkpointBench(ctx context.Context) (*CheckpointResult, error) {
	goroot, err := exec.CommandContext(ctx, "go", "env", "GOROOT").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOROOT: %w", err)
	}
	src := filepath.Join(strings.TrimSpace(string(goroot)), "src", h.cfg.CheckpointTree)
	ws := filepath.Join(h.dir, "checkpoint-ws")
	h.logf("checkpoint: copying %s and committing it", src)
	for _, c := range [][]string{{"cp", "-a", src, ws}, {"git", "-C", ws, "init", "-q"}, {"git", "-C", ws, "add", "-A"},
		{"git", "-C", ws, "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-qm", "src"}} {
		if out, err := exec.CommandContext(ctx, c[0], c[1:]...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%v: %v: %s", c, err, out)
		}
	}
	var files []string
	filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && filepath.Ext(p) == ".go" {
			files = append(files, p)
		}
		if err == nil && d.Name() == ".git" {
			return filepath.SkipDir
		}
		return nil
	})
	n, _ := exec.CommandContext(ctx, "git", "-C", ws, "ls-files").Output()
	r := &CheckpointResult{Repo: runtime.Version() + " " + filepath.Join("src", h.cfg.CheckpointTree),
		Files: countLines(n), Turns: h.cfg.CheckpointTurns}
	storeDir := filepath.Join(h.dir, "checkpoints", "bench")
	st, err := checkpoint.Open(storeDir, checkpoint.Limits{})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if _, err := st.Take(ctx, ws, checkpoint.Turn{Leaf: "first"}); err != nil {
		return nil, err
	}
	r.FirstMs = ms(time.Since(start))
	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		return nil, err
	}
	if err := sb.Probe(); err != nil {
		return nil, fmt.Errorf("sandbox unusable: %w", err)
	}
	bashWS := filepath.Join(h.dir, "checkpoint-bash")
	os.MkdirAll(bashWS, 0o755)
	take := func() (wall, cpu float64, err error) {
		var r0, r1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &r0)
		t := time.Now()
		_, err = st.Take(ctx, ws, checkpoint.Turn{Leaf: "turn"})
		wall = ms(time.Since(t))
		syscall.Getrusage(syscall.RUSAGE_CHILDREN, &r1)
		cpu = float64(r1.Utime.Nano()+r1.Stime.Nano()-r0.Utime.Nano()-r0.Stime.Nano()) / 1e6
		return wall, cpu, err
	}
	// Ten Takes make the store's first size check start git's gc --auto in
	// the background (the first Take left every object loose); the
	// measurement starts once it is done.
	for i := 0; i < sizeEveryTakes; i++ {
		if _, _, err := take(); err != nil {
			return nil, err
		}
	}
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(storeDir, "git", "gc.pid")); os.IsNotExist(err) {
			break
		}
	}
	var unchanged, oneFile, unchangedCPU, oneFileCPU, bash []float64
	for i := 0; i < h.cfg.CheckpointRounds; i++ {
		d, cpu, err := take()
		if err != nil {
			return nil, err
		}
		unchanged, unchangedCPU = append(unchanged, d), append(unchangedCPU, cpu)
		if err := appendLine(files[i*97%len(files)], i); err != nil {
			return nil, err
		}
		if d, cpu, err = take(); err != nil {
			return nil, err
		}
		oneFile, oneFileCPU = append(oneFile, d), append(oneFileCPU, cpu)
		t := time.Now()
		res := tools.Run(ctx, tools.Bash, []byte(`{"command":"true"}`), tools.Options{Workspace: bashWS, Runner: sb,
			OutputDir: "out", Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + bashWS}})
		if res.IsError {
			return nil, fmt.Errorf("sandboxed bash true: %s", res.Content)
		}
		bash = append(bash, ms(time.Since(t)))
	}
	r.Unchanged, r.OneFile, r.BashTrue = dist(unchanged), dist(oneFile), dist(bash)
	r.UnchangedCPU, r.OneFileCPU = dist(unchangedCPU), dist(oneFileCPU)
	r.Ratio = r.OneFile.P95 / r.BashTrue.P50
	r.StoreBefore = diskBytes(storeDir)
	for i := 0; i < h.cfg.CheckpointTurns; i++ {
		if err := appendLine(files[(i*131+7)%len(files)], i); err != nil {
			return nil, err
		}
		if _, _, err := take(); err != nil {
			return nil, err
		}
	}
	r.StoreAfter = diskBytes(storeDir)
	for _, lat := range h.cfg.CheckpointModelMs {
		t, err := h.checkpointInTurn(ctx, ws, files, lat)
		if err != nil {
			return nil, err
		}
		r.InTurn = append(r.InTurn, t)
	}
	r.Load = loadAverage()
	return r, nil
}

// checkpointInTurn runs, on two workers whose scripted model answers
// after lat ms, one with checkpoints off and one with them on, a session
// each of checkpointTurnRounds prompts of bash calls in ws, the two
// sessions' prompts alternating (the first of each round changes), and
// reads the gaps from their histories. Each session's first turn (on, the
// first Take of its store: every file hashed) is left out and reported.
func (h *harness) checkpointInTurn(ctx context.Context, ws string, files []string, lat int64) (CheckpointTurn, error) {
	t := CheckpointTurn{ModelMs: lat}
	var ss [2]settings.Settings
	for i, on := range []bool{false, true} {
		s := h.scenario(fmt.Sprintf("checkpoint-%d-%t", lat, on))
		s.Checkpoints.Enabled = on
		s.Scripted.LatencyMs, s.Scripted.StreamDelayMs = lat, 0
		s.Compaction.Enabled = false
		s.Agent.ContinueAsNewEvents = 100000
		w, err := startChild(ctx, s)
		if err != nil {
			return t, err
		}
		defer w.stop()
		ss[i] = s
	}
	rounds := max(1, min(4, h.cfg.CheckpointToolTurns/2))
	var off, changed, unchanged []float64
	var steps []float64
	edit := 0
	for r := range rounds {
		for k := range 2 {
			i := (r + k) % 2
			s := ss[i]
			in := client.PromptInput(s, fmt.Sprintf("ckpt-turn-%d-%d", lat, i), "edit the files")
			in.Workspace = ws
			// Even turns append a line to a file, odd ones change nothing.
			for j := range h.cfg.CheckpointToolTurns / rounds {
				rel, _ := filepath.Rel(ws, files[(edit*53+11)%len(files)])
				cmd := fmt.Sprintf("echo '// turn %d' >> %s", edit, rel)
				if j%2 == 1 {
					cmd = "true"
				}
				in.Model.Faults = append(in.Model.Faults, fmt.Sprintf(`tool:bash {"command":%q}`, cmd))
				edit++
			}
			in.Model.Faults = append(in.Model.Faults, "text:done")
			run, err := h.startInput(ctx, s, in)
			if err == nil {
				err = promptDone(ctx, run, agent.StatusCompleted)
			}
			var g, st []float64
			if err == nil {
				g, st, err = h.turnGaps(ctx, run.GetID(), run.GetRunID())
			}
			if err == nil && len(g) != len(in.Model.Faults)-1 {
				err = fmt.Errorf("checkpoint in a turn: %d tool turns in history, want %d", len(g), len(in.Model.Faults)-1)
			}
			if err != nil {
				return t, err
			}
			for j, gap := range g {
				switch {
				case r == 0 && j == 0:
					if i == 1 {
						t.FirstMs = gap
					}
				case i == 0:
					off = append(off, gap)
				case j%2 == 1: // after an appended line
					changed = append(changed, gap)
				default: // after a bash `true`
					unchanged = append(unchanged, gap)
				}
			}
			if i == 1 {
				steps = append(steps, st...)
			}
		}
	}
	t.Off, t.Changed, t.Unchanged, t.Step = dist(off), dist(changed), dist(unchanged), dist(steps)
	t.Added = max(t.Changed.P95, t.Unchanged.P95) - t.Off.P95
	t.Ratio = t.Added / t.Step.P50
	h.logf("checkpoint in a turn: model %d ms: answer to call p95 %.1f ms after a change, %.1f ms after none, %.1f ms without checkpoints",
		lat, t.Changed.P95, t.Unchanged.P95, t.Off.P95)
	return t, nil
}

// turnGaps reads a run's history: for each answer with a bash call, the
// time from the model call's completion to the call's scheduling, and
// each bash call's activity from scheduled to completed.
func (h *harness) turnGaps(ctx context.Context, id, runID string) (gaps, steps []float64, err error) {
	evs, err := h.runHistory(ctx, id, runID, 0)
	names, at := map[int64]string{}, map[int64]time.Time{}
	var answered time.Time
	for _, ev := range evs {
		when := ev.GetEventTime().AsTime()
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			names[ev.GetEventId()], at[ev.GetEventId()] = a.GetActivityType().GetName(), when
			if a.GetActivityType().GetName() == activities.RunToolName && !answered.IsZero() {
				gaps, answered = append(gaps, ms(when.Sub(answered))), time.Time{}
			}
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil {
			switch names[a.GetScheduledEventId()] {
			case activities.CallModelName:
				answered = when
			case activities.RunToolName:
				steps = append(steps, ms(when.Sub(at[a.GetScheduledEventId()])))
			}
		}
	}
	return gaps, steps, err
}

func appendLine(path string, i int) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(f, "// checkpoint bench edit %d\n", i)
	return f.Close()
}

func countLines(b []byte) (n int) {
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n
}

// diskBytes is the size of the files under root.
func diskBytes(root string) (n int64) {
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if fi, e := d.Info(); err == nil && e == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

func (c *CheckpointResult) rows() []Row {
	rows := []Row{{"checkpoint Take",
		fmt.Sprintf("%s, %d files: nothing changed p50 %.1f / p95 %.1f ms (git CPU p50 %.1f / p95 %.1f ms), one file changed p50 %.1f / p95 %.1f ms (git CPU p50 %.1f / p95 %.1f ms) (n=%d each); sandboxed bash `true` step p50 %.1f / p95 %.1f ms; one-file p95 / bash p50 = %.2f (first Take %.0f ms; load %s)",
			c.Repo, c.Files, c.Unchanged.P50, c.Unchanged.P95, c.UnchangedCPU.P50, c.UnchangedCPU.P95,
			c.OneFile.P50, c.OneFile.P95, c.OneFileCPU.P50, c.OneFileCPU.P95, c.OneFile.N,
			c.BashTrue.P50, c.BashTrue.P95, c.Ratio, c.FirstMs, c.Load),
		"(info: the Take itself, now off the tool step's path)", "info"},
		{"checkpoint store growth",
			fmt.Sprintf("%d turns of one small edit: %.1f MB -> %.1f MB, %.1f KB a turn", c.Turns,
				float64(c.StoreBefore)/1e6, float64(c.StoreAfter)/1e6, float64(c.StoreAfter-c.StoreBefore)/1e3/float64(c.Turns)),
			"(info)", "info"}}
	for _, t := range c.InTurn {
		target, v := "(info: the worst case, a model that answers at once)", "info"
		if t.ModelMs > 0 {
			target, v = "added p95 <= 50 ms and <= 10% of a bash step", verdict(t.Added <= 50 && t.Ratio <= 0.10)
		}
		rows = append(rows, Row{fmt.Sprintf("checkpoint in a tool turn, model %d ms", t.ModelMs),
			fmt.Sprintf("%s, %d files: answer to bash call with checkpoints p50 %.1f / p95 %.1f ms after a turn that appended a line to a file (n=%d), p50 %.1f / p95 %.1f ms after a bash `true` (n=%d); without p50 %.1f / p95 %.1f ms (n=%d; alternating prompts; the session's first turn, %.0f ms with checkpoints, left out); added p95 %.1f ms; bash step p50 %.1f ms; added p95 / bash step = %.2f (load %s)",
				c.Repo, c.Files, t.Changed.P50, t.Changed.P95, t.Changed.N, t.Unchanged.P50, t.Unchanged.P95, t.Unchanged.N,
				t.Off.P50, t.Off.P95, t.Off.N, t.FirstMs, t.Added, t.Step.P50, t.Ratio, c.Load),
			target, v})
	}
	return rows
}
