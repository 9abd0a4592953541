// Package follow tests control.Controller.Follow against the embedded
// Temporal server (internal/devserver) with a small workflow of its own
// (events query, sleeps, continue-as-new, a streaming activity, waiting to
// be terminated), so it does not depend on the Prompt workflow. Skipped
// under -short; one server for the package.
package follow

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/devserver"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/testserver"
	"github.com/durableagent/durableagent/workflows"
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(testserver.Main(m))
}

func quiet() *slog.Logger { return testserver.Quiet() }

// server is the package's shared server (testserver), started on first
// use.
func server(t *testing.T) *devserver.Server {
	t.Helper()
	return testserver.Server(t)
}

func dial(t *testing.T, opts client.Options) client.Client {
	t.Helper()
	s := server(t)
	opts.HostPort, opts.Namespace = s.FrontendAddress(), devserver.DefaultNamespace
	opts.Logger = sdklog.NewStructuredLogger(quiet())
	c, err := client.Dial(opts)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func newQueue() string { return testserver.Queue("follow") }

// heartbeatThrottle is the test worker's: snapshots reach the server at
// most that often.
const heartbeatThrottle = 100 * time.Millisecond

// startWorker runs the test workflow and activity on queue. Heartbeats are
// sent at most every heartbeatThrottle, so snapshots reach the server that
// often.
func startWorker(t *testing.T, c client.Client, queue string) worker.Worker {
	t.Helper()
	w := worker.New(c, queue, worker.Options{
		DefaultHeartbeatThrottleInterval: heartbeatThrottle,
		MaxHeartbeatThrottleInterval:     heartbeatThrottle,
	})
	w.RegisterWorkflowWithOptions(scriptWorkflow, workflow.RegisterOptions{Name: scriptWorkflowName})
	w.RegisterActivityWithOptions(streamActivity, activity.RegisterOptions{Name: streamActivityName})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	return w
}

const (
	scriptWorkflowName = "FollowScript"
	streamActivityName = "FollowStream"
)

// script is the test workflow's input: what it emits, and how.
type script struct {
	// Turns is the number of turn_start events, SleepMs apart.
	Turns   int `json:"turns"`
	SleepMs int `json:"sleepMs"`
	// ContinueAfter continues as new right after that many turns of the
	// first run (0: never); the events of that turn are emitted in the
	// same workflow task as the continue-as-new, so only a query of the
	// closed run shows them.
	ContinueAfter int `json:"continueAfter"`
	// Stream makes a model call: an activity that heartbeats a snapshot
	// after each piece, PieceMs apart, then message_end with the text.
	Stream  []string `json:"stream,omitempty"`
	PieceMs int      `json:"pieceMs"`
	// Wait blocks before prompt_end (to be terminated or time out).
	Wait bool `json:"wait"`

	// Carried across continue-as-new.
	Seq       int64 `json:"seq"`
	Continued bool  `json:"continued"`
	Turn      int   `json:"turn"`
}

// scriptWorkflow's result carries its events as a prompt's does
// (PromptResult.LastEvents): a follower reads a finished run from there.
func scriptWorkflow(ctx workflow.Context, s script) (workflows.PromptResult, error) {
	var events []agent.Event
	seq := s.Seq
	emit := func(e agent.Event) {
		seq++
		e.Seq, e.Time = seq, workflow.Now(ctx).UTC()
		events = append(events, e)
	}
	if err := workflow.SetQueryHandler(ctx, agent.QueryEvents, func(after int64) ([]agent.Event, error) {
		out := []agent.Event{}
		for _, e := range events {
			if e.Seq > after {
				out = append(out, e)
			}
		}
		return out, nil
	}); err != nil {
		return workflows.PromptResult{}, err
	}
	if !s.Continued {
		emit(agent.Event{Type: agent.EventAgentStart})
	}
	for s.Turn < s.Turns {
		if err := workflow.Sleep(ctx, time.Duration(s.SleepMs)*time.Millisecond); err != nil {
			return workflows.PromptResult{}, err
		}
		s.Turn++
		emit(agent.Event{Type: agent.EventTurnStart, Turn: s.Turn})
		if !s.Continued && s.Turn == s.ContinueAfter {
			emit(agent.Event{Type: agent.EventTurnEnd, Turn: s.Turn})
			s.Seq, s.Continued = seq, true
			return workflows.PromptResult{}, workflow.NewContinueAsNewError(ctx, scriptWorkflowName, s)
		}
	}
	if len(s.Stream) > 0 {
		emit(agent.Event{Type: agent.EventMessageStart, EntryID: "a1"})
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: time.Minute, HeartbeatTimeout: 10 * time.Second,
			RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1},
		})
		var text string
		if err := workflow.ExecuteActivity(actx, streamActivityName, s.Stream, s.PieceMs).Get(ctx, &text); err != nil {
			return workflows.PromptResult{}, err
		}
		msg := agent.TextMessage(agent.RoleAssistant, text)
		msg.StopReason = agent.StopReasonStop
		emit(agent.Event{Type: agent.EventMessageEnd, EntryID: "a1", Message: &msg})
	}
	if s.Wait {
		if err := workflow.Await(ctx, func() bool { return false }); err != nil {
			return workflows.PromptResult{}, err
		}
	}
	emit(agent.Event{Type: agent.EventPromptEnd, Status: agent.StatusCompleted})
	return workflows.PromptResult{Status: agent.StatusCompleted, LastEvents: events}, nil
}

// streamActivity is a model call that streams pieces, heartbeating the
// accumulator's snapshot after each.
func streamActivity(ctx context.Context, pieces []string, pieceMs int) (string, error) {
	acc := live.NewModel("a1", 0)
	var all strings.Builder
	for _, p := range pieces {
		acc.Add(llm.Delta{Type: agent.DeltaText, Delta: p})
		all.WriteString(p)
		activity.RecordHeartbeat(ctx, acc.Snapshot())
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(time.Duration(pieceMs) * time.Millisecond):
		}
	}
	return all.String(), nil
}

// countingClient counts the Describe calls Follow makes and their time.
type countingClient struct {
	client.Client
	describes atomic.Int64
	nanos     atomic.Int64
}

func (c *countingClient) DescribeWorkflowExecution(ctx context.Context, id, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	start := time.Now()
	r, err := c.Client.DescribeWorkflowExecution(ctx, id, runID)
	c.describes.Add(1)
	c.nanos.Add(int64(time.Since(start)))
	return r, err
}

// avg is the mean time of a Describe call.
func (c *countingClient) avg() time.Duration {
	n := c.describes.Load()
	if n == 0 {
		return 0
	}
	return time.Duration(c.nanos.Load() / n)
}
