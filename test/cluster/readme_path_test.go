//go:build linux

package cluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The README's cluster path, run line by line as a person would (as root,
// with Debian's postgresql package and the Go toolchain), reaches a
// finished job: its own PostgreSQL (initdb as the postgres user), the
// server's main, `starter cluster wait` and `init` (no temporal CLI), two
// cluster workers and a prompt. Only the first line's directory and ports
// change (free ones), and the model is the scripted fake the README names.
func TestREADME_ClusterPathRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs PostgreSQL and a Temporal server (skipped with -short)")
	}
	if os.Geteuid() != 0 {
		t.Skip("the README's path runs as root (runuser -u postgres)")
	}
	if m, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb"); len(m) == 0 {
		if os.Getenv("PGTEST_REQUIRED") != "" {
			t.Fatal("no /usr/lib/postgresql/*/bin/initdb (apt-get install postgresql)")
		}
		t.Skip("no Debian PostgreSQL (apt-get install postgresql)")
	}
	block, first := readmeClusterBlock(t)

	// The cluster's directory: the postgres user must reach its pg dir.
	dir, err := os.MkdirTemp("", "readme-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	vars := regexp.MustCompile(`([A-Z_]+)=(\S+)`).FindAllStringSubmatch(first, -1)
	if !strings.HasPrefix(first, "export CLUSTER=") || len(vars) < 11 {
		t.Fatalf("the block's first line should export CLUSTER, PGPORT and the server's nine ports: %q", first)
	}
	var repl []string
	frontend := ""
	for _, v := range vars {
		val := dir
		if v[1] != "CLUSTER" {
			val = strconv.Itoa(freeLowPort(t))
		}
		if v[1] == "FRONTEND_GRPC_PORT" {
			frontend = "127.0.0.1:" + val
		}
		repl = append(repl, v[1]+"="+val)
	}
	script := "set -euo pipefail\nexport " + strings.Join(repl, " ") + "\n" + strings.TrimPrefix(block, first+"\n")
	provider := "DURABLE_AGENT_MODEL_PROVIDER=anthropic ANTHROPIC_API_KEY=sk-ant-..."
	if !strings.Contains(script, provider) {
		t.Fatalf("the block no longer names %q (the line this test swaps for the scripted model)", provider)
	}
	script = strings.Replace(script, provider, "DURABLE_AGENT_MODEL_PROVIDER=scripted", 1)

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = RepoRoot()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The server and the workers run on in the background: end them, and
	// PostgreSQL (pg_ctl detaches it), when the test ends.
	t.Cleanup(func() {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		if pg := filepath.Join(dir, "pg"); fileExists(filepath.Join(pg, "postmaster.pid")) {
			ctl, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
			_ = exec.Command("runuser", "-u", "postgres", "--", ctl[len(ctl)-1], "-D", pg, "stop", "-m", "immediate").Run()
		}
	})
	// Output to a file, not a pipe: the server's and the workers' shells
	// run on after the block and would hold a pipe open.
	outPath := filepath.Join(dir, "block.out")
	outFile, err := os.Create(outPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = outFile, outFile
	err = cmd.Run()
	outFile.Close()
	out, _ := os.ReadFile(outPath)
	logs := func() string {
		var b strings.Builder
		for _, f := range []string{"temporal.log", "w1.log", "w2.log"} {
			data, _ := os.ReadFile(filepath.Join(dir, f))
			b.WriteString("--- " + f + ":\n" + lastLines(string(data), 15) + "\n")
		}
		return b.String()
	}
	if err != nil {
		t.Fatalf("the README's cluster block failed: %v\n%s\n%s", err, lastLines(string(out), 30), logs())
	}
	for _, want := range []string{"is serving", "namespace default created", "Scripted reply to: fix the failing test"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the block's output lacks %q:\n%s\n%s", want, lastLines(string(out), 30), logs())
		}
	}
	// The cluster runs on: init again finds the namespace, and a worker
	// for a namespace nobody created says which step makes it, first.
	run := func(bin string, env ...string) (string, error) {
		c := exec.Command(filepath.Join(dir, "bin", bin), "cluster", "init")
		if bin == "worker-cluster" {
			c = exec.Command(filepath.Join(dir, "bin", bin))
		}
		c.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TEMPORAL_ADDRESS=" + frontend,
			"DURABLE_AGENT_HOME=" + filepath.Join(dir, "w3"), "DURABLE_AGENT_MODEL_PROVIDER=scripted"}, env...)
		out, err := c.CombinedOutput()
		return string(out), err
	}
	if out, err := run("starter"); err != nil || !strings.Contains(out, "namespace default exists") {
		t.Errorf("starter cluster init a second time: %v\n%s", err, out)
	}
	out2, err := run("worker-cluster", "TEMPORAL_NAMESPACE=nobody-made-it")
	if first, _, _ := strings.Cut(strings.TrimSpace(out2), "\n"); err == nil ||
		!strings.Contains(first, `namespace "nobody-made-it" does not exist`) || !strings.Contains(first, "starter cluster init") {
		t.Errorf("a worker for a missing namespace: %v, want its first line to name the namespace step:\n%s", err, out2)
	}

	// Both workers came up and say which task queue (and tool host) they serve.
	for _, w := range []string{"w1.log", "w2.log"} {
		data, _ := os.ReadFile(filepath.Join(dir, w))
		if !strings.Contains(string(data), "worker running on task queue ") {
			t.Errorf("%s does not say its task queue:\n%s", w, lastLines(string(data), 10))
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
