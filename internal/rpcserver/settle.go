package rpcserver

import (
	"context"
	"fmt"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/rpc"
)

// settled writes agent_settled: the prompt this connection followed has
// ended (after its retries, compactions and follow-ups), so the session
// is idle and a prompt sent now starts.
func (c *conn) settled(aborted bool) {
	_ = c.out.write(rpc.SettledEvent{Type: rpc.EventAgentSettled, Aborted: aborted})
}

// abort sends abort and, when this connection follows the prompt, answers
// only once it has ended (its prompt_end and agent_settled are written
// first), as pi 1.6 does, so `abort` then `prompt` is not "session busy".
// A prompt that does not end within the command timeout is an error.
func (c *conn) abort(ctx context.Context, _ rpc.Command) (any, error) {
	f := c.activeFollower()
	if err := client.IdleOK(c.b.Abort(ctx)); err != nil || f == nil {
		return nil, err
	}
	select {
	case <-f.done:
		return nil, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("abort sent, but prompt %s (run %s) has not ended within %s; watch for its prompt_end", f.prompt.WorkflowID, f.prompt.RunID, c.s.timeout())
	}
}
