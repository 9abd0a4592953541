package activities

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A running call's heartbeat that a saturated server does not answer in
// time (the SDK gives it 1 s, then cancels the call) is answered as a
// success, so the model call is not cut and made again (issue 26); the
// failure goes through once no heartbeat landed for the heartbeat
// timeout (the SDK then cancels the call, as the server has timed it
// out), and answers that are not transient always do.
func TestHeartbeatGuard_KeepsACallThroughTransientBeatFailures(t *testing.T) {
	now := time.Unix(1000, 0)
	guardNow = func() time.Time { return now }
	defer func() { guardNow = time.Now }()
	token := []byte("token-of-a-running-call")
	unguard := guardHeartbeats(token, 20*time.Second)
	defer unguard()

	beat := func(answer error) error {
		req := &workflowservice.RecordActivityTaskHeartbeatRequest{TaskToken: token}
		return HeartbeatGuard(context.Background(), "/temporal.api.workflowservice.v1.WorkflowService/RecordActivityTaskHeartbeat",
			req, &workflowservice.RecordActivityTaskHeartbeatResponse{}, nil,
			func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return answer })
	}
	deadline := status.Error(codes.DeadlineExceeded, "context deadline exceeded")
	for _, c := range []struct {
		name    string
		advance time.Duration
		answer  error
		wantErr bool
	}{
		{"a beat that timed out 1 s after the start", time.Second, deadline, false},
		{"a busy server", 5 * time.Second, status.Error(codes.ResourceExhausted, "workflow is busy"), false},
		{"unavailable", 5 * time.Second, status.Error(codes.Unavailable, "connection refused"), false},
		{"a beat that lands", time.Second, nil, false},
		{"timed out 19.9 s after the last landed beat", 19900 * time.Millisecond, deadline, false},
		{"timed out 20 s after the last landed beat: the call is lost", 100 * time.Millisecond, deadline, true},
		{"the server no longer knows the call", 0, status.Error(codes.NotFound, "activity not found"), true},
		{"a message too large is not transient", 0, status.Error(codes.ResourceExhausted, "grpc: trying to send message larger than max (5000000 vs. 4194304)"), true},
		{"landed again", 0, nil, false},
		{"and a timeout is kept again", time.Second, deadline, false},
	} {
		now = now.Add(c.advance)
		err := beat(c.answer)
		if (err != nil) != c.wantErr {
			t.Fatalf("%s: the guard answered %v, want an error: %v", c.name, err, c.wantErr)
		}
		if c.wantErr && status.Code(err) != status.Code(c.answer) {
			t.Fatalf("%s: the guard answered %v, want the server's %v", c.name, err, c.answer)
		}
	}
	// Not guarded: another call's token, a call that left, other RPCs.
	other := &workflowservice.RecordActivityTaskHeartbeatRequest{TaskToken: []byte("another call")}
	fail := func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error { return deadline }
	if err := HeartbeatGuard(context.Background(), "m", other, nil, nil, fail); err == nil {
		t.Fatal("the heartbeat of a call that did not register was answered as a success")
	}
	if err := HeartbeatGuard(context.Background(), "m", &workflowservice.DescribeWorkflowExecutionRequest{}, nil, nil, fail); err == nil {
		t.Fatal("a Describe that timed out was answered as a success")
	}
	unguard()
	if err := beat(deadline); err == nil {
		t.Fatal("the heartbeat of a call that ended was answered as a success")
	}
}

// A call without a heartbeat timeout (or outside an activity) registers
// nothing.
func TestHeartbeatGuard_NoTimeoutNoGuard(t *testing.T) {
	unguard := guardHeartbeats([]byte("t"), 0)
	defer unguard()
	req := &workflowservice.RecordActivityTaskHeartbeatRequest{TaskToken: []byte("t")}
	err := HeartbeatGuard(context.Background(), "m", req, nil, nil,
		func(context.Context, string, any, any, *grpc.ClientConn, ...grpc.CallOption) error {
			return status.Error(codes.DeadlineExceeded, "x")
		})
	if err == nil {
		t.Fatal("a call without a heartbeat timeout was guarded")
	}
}
