package agent

import "time"

// The queue of a running prompt: the steer and follow_up messages it
// holds and has not delivered yet (docs/spec.md 15.1.7).
const (
	// QueryQueue returns the queued messages ([]QueuedMessage): the
	// steer messages first, then the follow-ups, each oldest first (the
	// order they are delivered in).
	QueryQueue = "queue"
	// UpdateEditQueue carries EditQueuePayload and returns
	// EditQueueResult: it edits, removes or clears queued messages.
	UpdateEditQueue = "edit_queue"
)

// QueuedMessage is a steer or follow_up message waiting in its prompt.
type QueuedMessage struct {
	// ID names it in edit_queue ("m1", "m2", ... in the order the
	// prompt received them).
	ID string `json:"id"`
	// Kind is SignalSteer or SignalFollowUp.
	Kind   string         `json:"kind"`
	Text   string         `json:"text"`
	Images []ContentBlock `json:"images,omitempty"`
	// SentAt is when its sender sent it (when the workflow received it
	// if the sender did not say).
	SentAt time.Time `json:"sentAt"`
}

// Edit-queue actions (EditQueuePayload.Action).
const (
	QueueEdit   = "edit"
	QueueRemove = "remove"
	QueueClear  = "clear"
)

// EditQueuePayload is the argument of the edit_queue update: edit sets
// the text (when not empty) and the kind (when not empty) of the
// message ID; remove takes it out; clear takes every message out.
type EditQueuePayload struct {
	Action string `json:"action"`
	ID     string `json:"id,omitempty"`
	Text   string `json:"text,omitempty"`
	Kind   string `json:"kind,omitempty"`
}

// EditQueueResult is the result of edit_queue: the messages it took out
// and the queue after it.
type EditQueueResult struct {
	Removed []QueuedMessage `json:"removed"`
	Queue   []QueuedMessage `json:"queue"`
}

// QueueTexts returns the texts of the steer and of the follow-up
// messages of q, each in order (never nil).
func QueueTexts(q []QueuedMessage) (steering, followUp []string) {
	steering, followUp = []string{}, []string{}
	for _, m := range q {
		if m.Kind == SignalSteer {
			steering = append(steering, m.Text)
		} else {
			followUp = append(followUp, m.Text)
		}
	}
	return steering, followUp
}
