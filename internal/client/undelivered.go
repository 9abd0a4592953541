package client

import (
	"context"
	"fmt"
	"time"

	"github.com/durableagent/durableagent/agent"
)

// resultTimeout bounds the read of a prompt's result for its undelivered
// messages (the run closes in the workflow task that emits prompt_end).
const resultTimeout = 5 * time.Second

// withUndelivered returns a prompt_end of a prompt that failed or was
// aborted (one that predates prompt_end carrying them) with Undelivered set to the steer and follow_up messages the
// prompt did not deliver (PromptResult.undelivered, spec 15.1.6), read
// from the result of run runID, so every client of Follow can tell its
// user which messages to send again. Other events, and a prompt_end
// that has them already, are returned as they are. When the result
// cannot be read, OnWait is told and e is returned as it is.
func (f *follower) withUndelivered(ctx context.Context, runID string, e agent.Event) agent.Event {
	if e.Type != agent.EventPromptEnd || (e.Status != agent.StatusFailed && e.Status != agent.StatusAborted) || len(e.Undelivered) > 0 {
		return e
	}
	cctx, cancel := context.WithTimeout(ctx, resultTimeout)
	defer cancel()
	res, err := Result(cctx, f.k.Client.GetWorkflow(cctx, f.wfID, runID))
	if res.Status == "" { // no PromptResult: the run's outcome could not be read
		if ctx.Err() == nil && f.k.OnWait != nil {
			f.k.OnWait(fmt.Sprintf("cannot read the result of the prompt in session %s (%s): the messages it did not deliver, if any, are not known",
				f.session, resultText(err)))
		}
		return e
	}
	e.Undelivered, e.UndeliveredMessages = res.Undelivered, res.UndeliveredMessages
	return e
}

func resultText(err error) string {
	if err == nil {
		return "no result"
	}
	return rpcText(err)
}
