package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/mcp"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/tools"
)

// envMCPServer makes this binary the MCP benchmark's stdio server (one
// tool, echo) instead of the bench.
const envMCPServer = "DURABLE_AGENT_BENCH_MCP_SERVER"

// MCPResult is the mcp benchmark: one MCP tool call (echo, a few bytes)
// of a stdio server already running, made directly with the official
// SDK (ClientSession.CallTool), by the worker's MCP client
// (internal/mcp: the server's lookup, the project's .mcp.json read, the
// progress token, the result's conversion and bound), and inside a
// prompt (the workflow, the RunTool activity, the session writes and one
// model call per tool call), where it is compared with the same prompt
// of read calls.
type MCPResult struct {
	Direct Dist `json:"direct"`
	Client Dist `json:"client"`
	// ClientRatio is Client.P50 / Direct.P50.
	ClientRatio float64 `json:"clientRatio"`
	// Calls is the number of tool calls of each prompt; StepMs and
	// ReadStepMs the mean wall time per call of the MCP and the read
	// prompts; StepRatio is StepMs / Direct.P50, ReadRatio StepMs /
	// ReadStepMs.
	Calls      int     `json:"calls"`
	StepMs     float64 `json:"stepMs"`
	ReadStepMs float64 `json:"readStepMs"`
	StepRatio  float64 `json:"stepRatio"`
	ReadRatio  float64 `json:"readRatio"`
}

// serveMCP is the benchmark's MCP server on stdio.
func serveMCP() int {
	s := sdk.NewServer(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	type in struct {
		Text string `json:"text"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, a in) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: a.Text}}}, nil, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}

// mcpBench times MCPRuns calls each way, direct and through the worker's
// client, interleaved; then MCPRounds pairs of prompts of MCPCalls MCP
// and read calls, interleaved. Both servers run unsandboxed
// (tools.sandbox.mode off), as the direct call's does: the figure is the
// product's own cost, not bubblewrap's.
func (h *harness) mcpBench(ctx context.Context) (*MCPResult, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	ws := filepath.Join(h.dir, "mcp-workspace")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(ws, "f.txt"), []byte("hello\n"), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, childArgs...)
	cmd.Env = append(os.Environ(), envMCPServer+"=1")
	direct, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("start the direct MCP server: %w", err)
	}
	defer direct.Close()
	srv := settings.MCPServer{Name: "bench", Command: exe, Args: childArgs, Env: map[string]string{envMCPServer: "1"}, TimeoutMs: 60_000}
	m := mcp.New([]settings.MCPServer{srv}, tools.Local)
	defer m.Close()
	env := tools.ScrubEnv(os.Environ(), nil)
	args := json.RawMessage(`{"text":"ping"}`)
	var d, c []float64
	for i := -1; i < h.cfg.MCPRuns; i++ { // round -1 starts both and is not counted
		t0 := time.Now()
		if _, err := direct.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: args}); err != nil {
			return nil, fmt.Errorf("direct MCP call: %w", err)
		}
		t1 := time.Now()
		if r := m.Call(ctx, ws, env, "mcp__bench__echo", args, nil); r.IsError || r.Content != "ping" {
			return nil, fmt.Errorf("MCP call through the product: %s", r.Content)
		}
		if i >= 0 {
			d, c = append(d, ms(t1.Sub(t0))), append(c, ms(time.Since(t1)))
		}
	}
	res := &MCPResult{Direct: dist(d), Client: dist(c), Calls: h.cfg.MCPCalls}
	res.ClientRatio = res.Client.P50 / res.Direct.P50

	s := h.scenario("mcp")
	s.Tools.Sandbox.Mode = settings.SandboxOff
	servers, _ := json.Marshal(map[string]settings.MCPServer{"bench": srv})
	s.MCP.Servers = string(servers)
	s.Tools.Enabled = []string{"read", "mcp__bench__*"}
	s.Tools.Policy = []string{"allow mcp__bench__*"}
	s.Compaction.Enabled = false
	w, err := startChild(ctx, s)
	if err != nil {
		return nil, err
	}
	defer w.stop()
	prompt := func(sess, call string) (float64, error) {
		in := client.PromptInput(s, sess, "call a tool")
		in.Workspace = ws
		for range h.cfg.MCPCalls {
			in.Model.Faults = append(in.Model.Faults, call)
		}
		in.Model.Faults = append(in.Model.Faults, "text:done")
		t0 := time.Now()
		run, err := h.startInput(ctx, s, in)
		if err == nil {
			err = promptDone(ctx, run, agent.StatusCompleted)
		}
		return ms(time.Since(t0)) / float64(h.cfg.MCPCalls), err
	}
	var steps, reads []float64
	for i := -1; i < h.cfg.MCPRounds; i++ { // round -1 starts the worker's server
		step, err := prompt(fmt.Sprintf("mcp-%d", i+1), `tool:mcp__bench__echo {"text":"ping"}`)
		if err != nil {
			return nil, err
		}
		read, err := prompt(fmt.Sprintf("mcp-read-%d", i+1), `tool:read {"path":"f.txt"}`)
		if err != nil {
			return nil, err
		}
		if i >= 0 {
			steps, reads = append(steps, step), append(reads, read)
		}
	}
	res.StepMs, res.ReadStepMs = mean(steps), mean(reads)
	res.StepRatio, res.ReadRatio = res.StepMs/res.Direct.P50, res.StepMs/res.ReadStepMs
	return res, nil
}

func (r *MCPResult) rows() []Row {
	return []Row{
		{"mcp client call", fmt.Sprintf("the worker's MCP client p50 %.3f ms / the SDK's direct call p50 %.3f ms = %.2fx (p95 %.3f / %.3f ms; n=%d each, interleaved, stdio server running)",
			r.Client.P50, r.Direct.P50, r.ClientRatio, r.Client.P95, r.Direct.P95, r.Client.N), "", "info"},
		{"mcp step in a prompt", fmt.Sprintf("%.1f ms per MCP call in a prompt of %d = %.0fx the direct call; a read call's step %.1f ms: MCP/read = %.2fx",
			r.StepMs, r.Calls, r.StepRatio, r.ReadStepMs, r.ReadRatio), "", "info"},
	}
}
