package client

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/workflows"
)

// ErrMessageTooLarge: a prompt, steer or follow-up message does not fit
// in what Temporal accepts as one payload. Every *MessageTooLargeError
// matches it.
var ErrMessageTooLarge = errors.New("message too large")

// MessageTooLargeError says a message was refused before anything was
// started or sent: the payload that would carry it (the prompt's input,
// or the signal) is Size bytes as Temporal would store it, above Limit
// (workflows.MaxInputBytes).
type MessageTooLargeError struct {
	What         string // "prompt", "steer", "follow_up"
	MessageBytes int
	Size, Limit  int
}

func (e *MessageTooLargeError) Error() string {
	return fmt.Sprintf("%s message too large: %d bytes, %d as Temporal stores it, at most %d "+
		"(Temporal's 2 MiB payload limit, less room for the settings); "+
		"put the text in a file in the workspace and ask the model to read it",
		e.What, e.MessageBytes, e.Size, e.Limit)
}

// Is matches ErrMessageTooLarge.
func (e *MessageTooLargeError) Is(target error) bool { return target == ErrMessageTooLarge }

// dataConverter is DataConverter, or the SDK's default.
func (k *Controller) dataConverter() converter.DataConverter {
	if k.DataConverter == nil {
		return converter.GetDefaultDataConverter()
	}
	return k.DataConverter
}

// checkPayloadSize refuses v (a workflow input or a signal's payload
// carrying a message of messageBytes) when its encoding with the
// controller's converter is above workflows.MaxInputBytes.
func (k *Controller) checkPayloadSize(what string, messageBytes int, v any) error {
	p, err := k.dataConverter().ToPayloads(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", what, err)
	}
	if size := p.Size(); size > workflows.MaxInputBytes {
		return &MessageTooLargeError{What: what, MessageBytes: messageBytes, Size: size, Limit: workflows.MaxInputBytes}
	}
	return nil
}
