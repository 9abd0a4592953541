package live

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"
)

// Sealed lines (spec 13.10.9, docs/live.md "Security"): a hub with a
// Converter sends each PushLine as a Temporal payload of that converter,
// {"sealed":"<base64 of the payload's protobuf>"}, and its Push says so.
// The follower opens each line with its own converter and refuses a line
// in clear on a sealed stream: the stream carries nothing in clear that
// the heartbeats carry encrypted.

// wireLine is a line as it travels: a PushLine in clear, or sealed.
type wireLine struct {
	PushLine
	Sealed []byte `json:"sealed,omitempty"`
}

// ErrPushSealed: a line of a push stream does not open with this
// client's converter (no codec key, or another key than the worker's), or
// a sealed stream sent one in clear.
var ErrPushSealed = errors.New("push stream: a sealed line does not open")

// encodeLine is l as the hub sends it (without the newline).
func encodeLine(dc converter.DataConverter, l PushLine) ([]byte, error) {
	if dc == nil {
		return json.Marshal(l)
	}
	p, err := dc.ToPayload(l)
	if err != nil {
		return nil, fmt.Errorf("live push: seal a line: %w", err)
	}
	b, err := proto.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("live push: seal a line: %w", err)
	}
	return json.Marshal(map[string][]byte{"sealed": b}) // the payload alone
}

// decodeLine reads one line of p's stream with dc (nil: the SDK's
// default converter, which opens no encrypted payload).
func decodeLine(b []byte, p Push, dc converter.DataConverter) (PushLine, error) {
	var w wireLine
	if err := json.Unmarshal(b, &w); err != nil {
		return PushLine{}, fmt.Errorf("push stream: bad line: %w", err)
	}
	if w.Sealed == nil {
		if p.Sealed {
			return PushLine{}, fmt.Errorf("%w: the worker seals this stream, but a line came in clear", ErrPushSealed)
		}
		return w.PushLine, nil
	}
	var payload commonpb.Payload
	if err := proto.Unmarshal(w.Sealed, &payload); err != nil {
		return PushLine{}, fmt.Errorf("push stream: bad sealed line: %w", err)
	}
	dc = cmp.Or(dc, converter.GetDefaultDataConverter())
	var l PushLine
	if err := dc.FromPayload(&payload, &l); err != nil {
		return PushLine{}, fmt.Errorf("%w (this client needs the worker's payload codec key, codec.keyFile): %w", ErrPushSealed, err)
	}
	return l, nil
}
