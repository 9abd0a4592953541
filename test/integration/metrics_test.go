package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
)

// Issue 26 (metrics) against the real thing: a real Prometheus scrapes a
// worker serving metrics.listen while it runs a prompt with a retried 503
// and a tool call; its query API shows the product's counters and the
// SDK's moved, and no prompt left counted as running.
func TestIntegration_MetricsScrapedByPrometheus(t *testing.T) {
	e := newEnv(t)
	bin := prometheusBinary(t)
	e.s.Metrics.Listen = freeAddr(t)
	e.startWorker()
	prom := startPrometheus(t, bin, e.s.Metrics.Listen)

	in := client.PromptInput(e.s, "metrics", "write a note")
	in.Workspace = t.TempDir()
	in.Model.Faults = []string{e503, `tool:write {"path":"note.txt","content":"hi"}`, `text:done`}
	run, err := e.k.StartPrompt(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("result %+v %v", res, err)
	}
	for _, q := range []struct{ query string }{
		{`sum(durableagent_retries_total{class="retryable",attempt="1"})`},
		{`sum(durableagent_model_calls_total{provider="scripted",outcome="error"})`},
		{`sum(durableagent_model_calls_total{provider="scripted",outcome="toolUse"})`},
		{`sum(durableagent_tool_calls_total{tool="write",outcome="ok"})`},
		{`sum(durableagent_backoff_duration_seconds_count)`},
		{`sum(temporal_workflow_completed_total{workflow_type="Prompt"})`},
	} {
		waitQuery(t, prom, q.query, func(v float64) bool { return v >= 1 }, ">= 1")
	}
	waitQuery(t, prom, `sum(durableagent_prompts{state="running"})`, func(v float64) bool { return v == 0 }, "0 after the prompt ended")
	waitQuery(t, prom, `sum(durableagent_prompts{state="waiting_retry"})`, func(v float64) bool { return v == 0 }, "0 after the retry")
}

// prometheusBinary is the Debian package's prometheus (.ci/run installs
// it); without it the test is skipped, except in CI.
func prometheusBinary(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("prometheus is not installed (apt-get install prometheus)")
		}
		t.Skip("prometheus is not installed (apt-get install prometheus)")
	}
	return bin
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startPrometheus runs Prometheus scraping target every second and
// returns its base URL once it is ready.
func startPrometheus(t *testing.T, bin, target string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: worker\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("prometheus log:\n%s", b)
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus at %s not ready: %v", base, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitQuery polls Prometheus's instant query API until query's single
// value satisfies ok.
func waitQuery(t *testing.T, base, query string, ok func(float64) bool, want string) {
	t.Helper()
	var last string
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		v, found, err := promQuery(base, query)
		switch {
		case err != nil:
			last = err.Error()
		case !found:
			last = "no series"
		case ok(v):
			return
		default:
			last = strconv.FormatFloat(v, 'g', -1, 64)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Errorf("%s: %s, want %s", query, last, want)
}

func promQuery(base, query string) (v float64, found bool, err error) {
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return 0, false, err
	}
	if body.Status != "success" {
		return 0, false, fmt.Errorf("query: %s", body.Error)
	}
	if len(body.Data.Result) == 0 {
		return 0, false, nil
	}
	s, _ := body.Data.Result[0].Value[1].(string)
	v, err = strconv.ParseFloat(s, 64)
	return v, err == nil, err
}
