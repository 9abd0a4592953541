package main

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Benchmark baseline. The benchmarks compare the Prompt workflow with the
// least a Temporal workflow can do on the same server and worker, so their
// ratios measure this product's overhead rather than Temporal's. Only the
// bench's workers register these names (registerBare); the product's
// worker does not. (The names keep their exported spelling: the product's
// one-door test, internal/client, allows the bench's ExecuteWorkflow of
// BareWorkflowName by that name.)
const (
	// BareWorkflowName is the registered name of Bare.
	BareWorkflowName = "BenchBare"
	// BareActivityName is the no-op activity Bare calls. The bench
	// registers a function that returns its input.
	BareActivityName = "BenchNoop"
)

// BareInput is Bare's input.
type BareInput struct {
	// Payload is passed to the activity and returned, so the baseline
	// carries data of the size the compared prompt does.
	Payload string `json:"payload"`
	// DelayMs > 0 adds a durable timer of that length and a second
	// activity call: the shape of a prompt whose first model call fails
	// once and is retried after a backoff.
	DelayMs int64 `json:"delayMs,omitempty"`
	// Activities is how many times the activity is called in sequence
	// before the optional timer (0 or 1: once): the shape of a prompt's
	// loop of model and tool calls, one round trip after another.
	Activities int `json:"activities,omitempty"`
}

// Bare calls the no-op activity once, or BareInput.Activities times in
// sequence (and once more after a timer, see BareInput.DelayMs), and
// returns what it returned last.
func Bare(ctx workflow.Context, in BareInput) (string, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	var out string
	for i := 0; i < max(in.Activities, 1); i++ {
		if err := workflow.ExecuteActivity(ctx, BareActivityName, in.Payload).Get(ctx, &out); err != nil {
			return "", err
		}
	}
	if in.DelayMs <= 0 {
		return out, nil
	}
	if err := workflow.NewTimer(ctx, time.Duration(in.DelayMs)*time.Millisecond).Get(ctx, nil); err != nil {
		return "", err
	}
	if err := workflow.ExecuteActivity(ctx, BareActivityName, in.Payload).Get(ctx, &out); err != nil {
		return "", err
	}
	return out, nil
}
