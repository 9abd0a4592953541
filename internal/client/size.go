package client

import (
	"cmp"
	"errors"
	"fmt"

	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/workflows"
)

// ErrMessageTooLarge: a prompt, steer or follow-up message does not fit
// in what Temporal accepts as one payload (workflows.MaxInputBytes as
// Temporal would store it); it is refused before anything is started or
// sent.
var ErrMessageTooLarge = errors.New("message too large")

// dataConverter is DataConverter, or the SDK's default.
func (k *Controller) dataConverter() converter.DataConverter {
	return cmp.Or(k.DataConverter, converter.GetDefaultDataConverter())
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
		return fmt.Errorf("%s %w: %d bytes, %d as Temporal stores it, at most %d "+
			"(Temporal's 2 MiB payload limit, less room for the settings); "+
			"put the text in a file in the workspace and ask the model to read it",
			what, ErrMessageTooLarge, messageBytes, size, workflows.MaxInputBytes)
	}
	return nil
}
