package main

import (
	"context"
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// The fixed-read variant's interceptor hides the heartbeat times (the
// follower's beat clock has nothing to time its reads from) and nothing
// else: the live output (the heartbeat details) still reaches it.
func TestHideHeartbeatTimes_ClearsOnlyHeartbeatTimes(t *testing.T) {
	beat := timestamppb.New(time.Unix(1700000000, 0))
	details := &commonpb.Payloads{Payloads: []*commonpb.Payload{{Data: []byte(`{"kind":"model"}`)}}}
	// The server's answer: one running activity that has heartbeated.
	answer := func(_ context.Context, _ string, _, r any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
		r.(*workflowservice.DescribeWorkflowExecutionResponse).PendingActivities = []*workflow.PendingActivityInfo{
			{ActivityId: "5", LastHeartbeatTime: beat, HeartbeatDetails: details},
		}
		return nil
	}
	var resp workflowservice.DescribeWorkflowExecutionResponse
	err := hideHeartbeatTimes(context.Background(), workflowservice.WorkflowService_DescribeWorkflowExecution_FullMethodName,
		&workflowservice.DescribeWorkflowExecutionRequest{}, &resp, nil, answer)
	if err != nil {
		t.Fatal(err)
	}
	pa := resp.GetPendingActivities()
	if len(pa) != 1 || pa[0].GetLastHeartbeatTime() != nil || pa[0].GetActivityId() != "5" ||
		string(pa[0].GetHeartbeatDetails().GetPayloads()[0].GetData()) != `{"kind":"model"}` {
		t.Fatalf("pending activities after the interceptor: %v; want activity 5 with its details and no heartbeat time", pa)
	}
}
