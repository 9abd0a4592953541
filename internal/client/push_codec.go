package client

import (
	"context"
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/internal/live"
)

// decodeWith makes p's streams open sealed lines with dc, the converter
// the heartbeat details are decoded with (the client's payload codec):
// a worker with a codec key seals what it pushes (spec 13.10.9). A line
// that does not open ends its stream, and the reader stays on the
// heartbeats.
func (p *pushReader) decodeWith(dc converter.DataConverter) {
	if p == nil {
		return
	}
	p.subscribe = func(ctx context.Context, push live.Push, fn func(live.Snapshot, time.Time)) error {
		return live.SubscribeWith(ctx, push, dc, fn)
	}
}
