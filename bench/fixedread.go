package main

import (
	"context"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
)

// hideHeartbeatTimes is the client interceptor of the fixed-read variant
// (StreamVariant.FixedReadMs): it clears the last heartbeat time of every
// pending activity in DescribeWorkflowExecution responses. control.Follow
// times its reads of the live output from those times (its beat clock);
// without them it has no prediction and reads on its poll interval while
// a call runs, which the variant sets to FixedReadMs: the fixed cadence
// the heartbeat-timed reads are compared with, and no knob in the
// product. The snapshots themselves are left as they are; a live event's
// Time is then when it was read, which the bench does not measure (it
// times deltas by its own clock on arrival).
func hideHeartbeatTimes(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if resp, ok := reply.(*workflowservice.DescribeWorkflowExecutionResponse); ok && err == nil {
		for _, pa := range resp.GetPendingActivities() {
			pa.LastHeartbeatTime = nil
		}
	}
	return err
}
