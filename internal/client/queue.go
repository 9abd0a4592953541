package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/durableagent/durableagent/agent"
)

// Queue returns the queued steer and follow_up messages of the session's
// running prompt, in delivery order (query queue).
func (k *Controller) Queue(ctx context.Context, sessionID string) ([]agent.QueuedMessage, error) {
	var q []agent.QueuedMessage
	err := k.query(ctx, sessionID, "", agent.QueryQueue, &q)
	return q, err
}

// EditQueue edits, removes or clears queued messages of the session's
// running prompt (update edit_queue); the workflow's validator refuses,
// in one line, a message already delivered or removed.
func (k *Controller) EditQueue(ctx context.Context, sessionID string, p agent.EditQueuePayload) (agent.EditQueueResult, error) {
	var res agent.EditQueueResult
	err := k.update(ctx, sessionID, agent.UpdateEditQueue, p, &res)
	if err != nil && !errors.Is(err, ErrNoRunningPrompt) {
		return res, fmt.Errorf("session %s: %w", sessionID, err)
	}
	return res, err
}

// Queue lists the running prompt's queued messages in delivery order;
// EditQueue edits, removes or clears them (update edit_queue; a message
// already delivered is an error saying so).
func (t *Session) Queue(ctx context.Context) ([]agent.QueuedMessage, error) {
	return t.k.Queue(ctx, t.SessionID())
}

// EditQueue edits, removes or clears the running prompt's queued messages
// (update edit_queue; a message already delivered is an error saying so).
func (t *Session) EditQueue(ctx context.Context, p agent.EditQueuePayload) (agent.EditQueueResult, error) {
	return t.k.EditQueue(ctx, t.SessionID(), p)
}
