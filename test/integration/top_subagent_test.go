package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/testserver"
)

// Issue 26 (Also; Metrics: "sub-agents running") with a sub-agent that
// waits for approval of its bash call: `starter top --json` marks its
// prompt with the parent's session and `top --once` lists it under the
// parent; the worker's /metrics counts 1 sub-agent running (and both
// prompts running); approved, everything ends and both go back to 0.
func TestIntegration_TopShowsSubAgents(t *testing.T) {
	e := newEnv(t)
	e.s.Tools.Enabled = append(e.s.Tools.Enabled, "task")
	e.s.Metrics.Listen = freeAddr(t)
	e.scriptSubAgents(func(string) []string {
		return []string{`tool:bash {"command":"echo from the sub-agent"}`, `text:sub-agent done`}
	})
	ctx := context.Background()
	const parent = "top-subagents"
	in := client.PromptInput(e.s, parent, "delegate it")
	in.Workspace = t.TempDir()
	in.Approval.RequireApproval = []string{"bash"} // the sub-agent inherits it
	in.Model.Faults = []string{`tool:task {"description":"echo","prompt":"echo something"}`, `text:parent done`}
	run, err := e.k.StartPrompt(ctx, in)
	if err != nil {
		t.Fatal(err)
	}

	var child client.Job
	testserver.WaitFor(t, 30*time.Second, "top --json listing the sub-agent waiting for approval", func() bool {
		code, out, stderr := e.starter("top", "--json")
		if code != cli.ExitOK {
			t.Fatalf("top --json: exit %d: %s", code, stderr)
		}
		var list []client.Job
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("top --json printed %q: %v", out, err)
		}
		for _, j := range list {
			if j.ParentSession == parent && j.Job != nil && j.Job.Status == agent.JobApproval {
				child = j
				return true
			}
		}
		return false
	})
	code, out, stderr := e.starter("top", "--once")
	if code != cli.ExitOK {
		t.Fatalf("top --once: exit %d: %s", code, stderr)
	}
	t.Logf("starter top --once:\n%s", out)
	if !strings.Contains(out, "2 running prompts (1 sub-agent)") || !strings.Contains(out, "\n"+parent+" ") ||
		!strings.Contains(out, "\n└ "+child.SessionID+" ") {
		t.Errorf("top --once does not list sub-agent %s under %s:\n%s", child.SessionID, parent, out)
	}
	scrape := func() (subagents, running float64) {
		return metricSum(t, e.s.Metrics.Listen, "durableagent_subagents", ""),
			metricSum(t, e.s.Metrics.Listen, "durableagent_prompts", `state="running"`)
	}
	if s, r := scrape(); s != 1 || r != 2 {
		t.Errorf("/metrics while the sub-agent waits: %v sub-agents and %v prompts running, want 1 and 2", s, r)
	}

	if err := e.k.ApproveTool(ctx, child.SessionID, agent.ApproveToolPayload{ToolCallID: "call_0_0", Approved: true}); err != nil {
		t.Fatal(err)
	}
	if res, err := e.result(run); err != nil || res.Status != agent.StatusCompleted || res.Text != "parent done" {
		t.Fatalf("parent: %+v %v", res, err)
	}
	testserver.WaitFor(t, 10*time.Second, "0 sub-agents and 0 prompts running", func() bool {
		s, r := scrape()
		return s == 0 && r == 0
	})
}

// metricSum is the sum of a metric's samples on a worker's /metrics page
// whose labels contain match ("": all).
func metricSum(t *testing.T, addr, name, match string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		labels, value, ok := strings.Cut(line[len(name):], " ")
		if !ok || !strings.Contains(labels, match) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			t.Fatalf("/metrics line %q: %v", line, err)
		}
		sum += v
	}
	return sum
}
