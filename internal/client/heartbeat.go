package client

import (
	"encoding/json"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/internal/live"
)

// heartbeatSnapshots decodes the stream snapshots in the heartbeat
// details of a Describe's pending activities (an activity without one
// has none; details that are not a snapshot are another activity's).
// err is set when some details could not be decoded at all (another
// payload codec key, or none): the others are returned.
func heartbeatSnapshots(resp *workflowservice.DescribeWorkflowExecutionResponse, dc converter.DataConverter) (out []live.Stamped, err error) {
	for _, pa := range resp.GetPendingActivities() {
		details := pa.GetHeartbeatDetails()
		if len(details.GetPayloads()) == 0 {
			continue
		}
		var raw json.RawMessage
		if e := dc.FromPayloads(details, &raw); e != nil {
			err = e
			continue
		}
		var snap live.Snapshot
		if json.Unmarshal(raw, &snap) != nil || (snap.Kind != live.KindModel && snap.Kind != live.KindTool) {
			continue
		}
		s := live.Stamped{Snapshot: snap, Call: pa.GetActivityId()}
		if t := pa.GetLastHeartbeatTime(); t != nil {
			s.At = t.AsTime()
		}
		out = append(out, s)
	}
	return out, err
}
