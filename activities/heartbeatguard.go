package activities

import (
	"context"
	"strings"
	"sync"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A heartbeat RPC that fails must not end the call (issue 26: under load
// 22 of 100 model calls were made twice). The SDK (v1.50) gives each
// heartbeat RPC max(throttle interval, 1 s) and cancels the activity's
// context when the RPC fails with what it takes for a transient error,
// a deadline included (sdk-go issue 437). HeartbeatGuard, a client
// interceptor on the worker's connection (internal/app installs it),
// answers such a failure of a registered call's heartbeat as a success
// while its last landed heartbeat is younger than its heartbeat timeout;
// after that, and for answers that are not transient (NotFound, a
// cancellation), the failure goes through. The measurement and the test
// are in docs/live.md ("A heartbeat that times out does not cut the
// call"); sdk v1.51 fixes the cause, and why the SDK stays and when to
// delete this guard is docs/development.md, "The SDK stays at v1.50.0".

// guarded are the running calls whose heartbeats HeartbeatGuard keeps,
// by task token.
var guarded = struct {
	sync.Mutex
	m map[string]*guardedCall
}{m: map[string]*guardedCall{}}

type guardedCall struct {
	timeout time.Duration
	landed  time.Time // the last heartbeat that landed, or the start
}

// guardNow is the guard's clock (tests move it).
var guardNow = time.Now

// guardHeartbeats registers a call's heartbeats with HeartbeatGuard
// (token: its task token; timeout: its heartbeat timeout, 0: none, and
// then nothing is guarded). The returned function unregisters it.
func guardHeartbeats(token []byte, timeout time.Duration) func() {
	if len(token) == 0 || timeout <= 0 {
		return func() {}
	}
	key := string(token)
	guarded.Lock()
	guarded.m[key] = &guardedCall{timeout: timeout, landed: guardNow()}
	guarded.Unlock()
	return func() {
		guarded.Lock()
		delete(guarded.m, key)
		guarded.Unlock()
	}
}

// HeartbeatGuard is the client interceptor that keeps a transient
// failure of a running call's heartbeat RPC from cutting the call (see
// above). Other RPCs pass through untouched.
func HeartbeatGuard(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	hb, ok := req.(*workflowservice.RecordActivityTaskHeartbeatRequest)
	if !ok {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	err := invoker(ctx, method, req, reply, cc, opts...)
	guarded.Lock()
	defer guarded.Unlock()
	c := guarded.m[string(hb.GetTaskToken())]
	switch {
	case c == nil:
		return err
	case err == nil:
		c.landed = guardNow()
		return nil
	case !transientBeatFailure(err) || guardNow().Sub(c.landed) >= c.timeout:
		return err
	}
	return nil
}

// transientBeatFailure: a heartbeat RPC that did not get an answer, or
// got one saying "try again" — not one saying the call is unknown
// (NotFound), cancelled, or refused for its content (too large). The
// guard runs inside the SDK's interceptors, on the wire's status.
func transientBeatFailure(err error) bool {
	st := status.Convert(err)
	switch st.Code() {
	case codes.ResourceExhausted:
		return !strings.Contains(st.Message(), "larger than max") && !strings.Contains(st.Message(), "message too large")
	case codes.DeadlineExceeded, codes.Unavailable, codes.Aborted, codes.Unknown, codes.Internal:
		return true
	}
	return false
}
