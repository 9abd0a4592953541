package activities

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/session"
)

// MaxPauseContinuations bounds the calls one model call makes to go on
// with a paused turn (agent.StopReasonContinue, Anthropic's pause_turn):
// past it, the last paused answer stands as the turn's answer (a stop).
const MaxPauseContinuations = 8

// finishMessage fills what the activity owns of an assistant message:
// role, API, priced usage, the secret redacted, the timestamp.
func finishMessage(msg *agent.Message, model ModelRef, secret string) {
	msg.Role = agent.RoleAssistant
	if msg.API == "" {
		msg.API = agent.APIOf(model.Provider)
	}
	if msg.Usage != nil {
		u := msg.Usage.Priced(*cmp.Or(model.Cost, &agent.ModelCost{}))
		msg.Usage = &u
	}
	RedactMessage(msg, secret)
	msg.Timestamp = time.Now().UnixMilli()
}

// continuePaused goes on with a turn the provider paused: the paused
// answer is written to the session (entry "<EntryID>-pause<n>", so it
// stays in the run context) and sent back, and the model is called again,
// until an answer that is not paused (or MaxPauseContinuations). *msg
// becomes the last answer; the returned id is the parent its entry gets.
// The workflow sees one call: its result is the last answer's, whose usage
// is what the context holds now (a paused answer's input tokens add up
// the server tools' internal rounds, and are no context size). The paused
// answers' usage is in their entries, and in billed with the last
// answer's (nil without a pause), which the budget counts. Live deltas of a continuation are
// numbered after the blocks before it.
func (a *Activities) continuePaused(ctx context.Context, provider llm.Provider, req *llm.Request, in CallModelInput, msg *agent.Message) (parent string, billed *agent.Usage, err error) {
	parent = in.LeafID
	var used []*agent.Usage
	onDelta := req.OnDelta
	blocks := 0
	for n := 1; msg.StopReason == agent.StopReasonContinue && ctx.Err() == nil; n++ {
		if n > MaxPauseContinuations {
			msg.StopReason = agent.StopReasonStop
			break
		}
		paused := *msg
		finishMessage(&paused, in.Model, req.Secret)
		id := fmt.Sprintf("%s-pause%d", in.EntryID, n)
		entry := session.Entry{Type: session.TypeMessage, ID: id, ParentID: parent, Timestamp: time.Now().UTC(), Message: &paused}
		if _, err := a.Sessions.Append(in.SessionID, entry); err != nil {
			return "", nil, storeError("write paused assistant message", err)
		}
		used = append(used, paused.Usage)
		parent = id
		blocks += len(paused.Content)
		if onDelta != nil {
			base := blocks
			req.OnDelta = func(d llm.Delta) {
				d.ContentIndex += base
				onDelta(d)
			}
		}
		req.Messages = append(req.Messages, paused)
		*msg = complete(ctx, provider, *req)
	}
	if parent != in.LeafID {
		billed = pricedSum(append(used, msg.Usage), in.Model.Cost)
	}
	return parent, billed, nil
}
