package activities

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/sandbox"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/tools"
)

// stepEnv is a RunTool activity environment whose session s1 has an
// assistant entry a1 asking for bash `true`, run by runner.
func stepEnv(b *testing.B, runner tools.Runner) *testsuite.TestActivityEnvironment {
	store, err := session.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	acts := &Activities{Sessions: store, HeartbeatInterval: time.Second,
		ToolPolicy: ToolPolicy{Confine: true, Runner: runner}}
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivityWithOptions(acts.RunTool, activityName(RunToolName))
	tc := agent.ToolCall{ID: "c1", Name: "bash", Arguments: json.RawMessage(`{"command":"true"}`)}
	m := agent.Message{Role: agent.RoleAssistant, StopReason: agent.StopReasonToolUse,
		Content: []agent.ContentBlock{{Type: "toolCall", ToolCall: &tc}}}
	if _, err := store.Append("s1", session.Entry{Type: session.TypeMessage, ID: "a1", Timestamp: time.Now(), Message: &m}); err != nil {
		b.Fatal(err)
	}
	return env
}

// modelTurn is the pause before each step: the model's turn between two
// tool calls (seconds in practice; the same pause as internal/sandbox's
// BenchmarkBashTrue_SandboxedVsLocal).
const modelTurn = 300 * time.Millisecond

// BenchmarkToolStep_BashTrueSandboxedVsLocal is issue 22's cost: the
// bash `true` tool step as the worker runs it (the RunTool activity:
// session load, the call, heartbeats, the result written to the
// session), in the sandbox of the default settings and unsandboxed,
// interleaved so all see the same load, each after a pause for the
// model's turn (modelTurn); then back to back, with no pause at all,
// sandboxed ("b2b") and unsandboxed ("b2b-local") taking turns in runs of
// 5 steps; and as the tool calls of answers run, a model turn and then 5
// steps back to back, sandboxed ("answers") and unsandboxed
// ("answers-local") taking turns. It reports the ratios of their means
// to the unsandboxed ones and logs the load:
//
//	go test ./activities -run '^$' -bench ToolStep -benchtime 30x
func BenchmarkToolStep_BashTrueSandboxedVsLocal(b *testing.B) {
	r, err := sandbox.New(sandbox.Config{})
	if err != nil {
		b.Fatal(err)
	}
	if err := r.Probe(); err != nil {
		b.Skipf("bubblewrap unusable here: %v", err)
	}
	ws := b.TempDir()
	envs := map[string]*testsuite.TestActivityEnvironment{"sandboxed": stepEnv(b, r), "local": stepEnv(b, tools.Local),
		"b2b": stepEnv(b, r), "b2b-local": stepEnv(b, tools.Local),
		"answers": stepEnv(b, r), "answers-local": stepEnv(b, tools.Local)}
	step := func(kind string, i int, pause time.Duration) time.Duration {
		time.Sleep(pause)
		start := time.Now()
		v, err := envs[kind].ExecuteActivity(RunToolName, RunToolInput{SessionID: "s1", AssistantEntryID: "a1",
			ToolCallID: "c1", ToolName: "bash", ResultEntryID: fmt.Sprintf("r%d", i), ParentID: "a1",
			Workspace: ws, Tools: agent.Tools{Enabled: []string{"bash"}}})
		d := time.Since(start)
		var res RunToolResult
		if err == nil {
			err = v.Get(&res)
		}
		if err != nil || res.IsError {
			b.Fatalf("%s step: %+v %v", kind, res, err)
		}
		return d
	}
	b.ResetTimer()
	var sandboxed, local, b2bSum, b2bLocal, ansSum, ansLocal time.Duration
	for i := 0; i < b.N; i++ {
		sandboxed += step("sandboxed", i, modelTurn)
		local += step("local", i, modelTurn)
	}
	for i := 0; i < b.N; i += 5 {
		n := min(5, b.N-i)
		for j := 0; j < n; j++ {
			b2bSum += step("b2b", i+j, 0)
		}
		for j := 0; j < n; j++ {
			b2bLocal += step("b2b-local", i+j, 0)
		}
	}
	for i := 0; i < b.N; i += 5 {
		n := min(5, b.N-i)
		time.Sleep(modelTurn)
		for j := 0; j < n; j++ {
			ansSum += step("answers", i+j, 0)
		}
		time.Sleep(modelTurn)
		for j := 0; j < n; j++ {
			ansLocal += step("answers-local", i+j, 0)
		}
	}
	b.StopTimer()
	load, _ := os.ReadFile("/proc/loadavg")
	b.ReportMetric(float64(sandboxed)/float64(local), "sandboxed/local")
	b.ReportMetric(float64(b2bSum)/float64(b2bLocal), "b2b/b2b-local")
	b.ReportMetric(float64(ansSum)/float64(ansLocal), "answers/answers-local")
	b.ReportMetric(float64(sandboxed.Microseconds())/float64(b.N)/1000, "ms/sandboxed")
	b.ReportMetric(float64(local.Microseconds())/float64(b.N)/1000, "ms/local")
	b.ReportMetric(float64(b2bSum.Microseconds())/float64(b.N)/1000, "ms/b2b")
	b.ReportMetric(float64(b2bLocal.Microseconds())/float64(b.N)/1000, "ms/b2b-local")
	b.ReportMetric(float64(ansSum.Microseconds())/float64(b.N)/1000, "ms/answers")
	b.ReportMetric(float64(ansLocal.Microseconds())/float64(b.N)/1000, "ms/answers-local")
	b.Logf("load average: %s", strings.TrimSpace(string(load)))
}
