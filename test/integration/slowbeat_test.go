package integration

import (
	"context"
	"errors"
	"net"
	"path"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/client"
)

// Spec 13.10.9 (issue 26): a heartbeat RPC that the server does not
// answer within the SDK's 1 s (a saturated server) does not cut the model
// call: the call goes on and its answer comes from one model call, not
// two (the SDK alone cancels the activity on that timeout, and the
// workflow then calls the model again: a second bill).
func TestIntegration_SlowHeartbeatDoesNotRepeatTheModelCall(t *testing.T) {
	e, answer := streamingEnv(t) // ~3 s of streaming
	e.s.Model.HeartbeatTimeoutMs = 10_000
	p := startSlowBeatProxy(t, e.s.Temporal.Address)
	ws := e.s
	ws.Temporal.Address = p.addr()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	wc, err := client.Dial(ctx, ws, quiet()) // the worker's client, as the product dials it
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	w, err := app.NewWorker(wc, e.s, e.ext)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	e.w = w

	run := e.prompt("slow-beat")
	res, err := e.result(run)
	if err != nil {
		t.Fatalf("prompt: %v", err)
	}
	if p.held.Load() == 0 {
		t.Fatal("no heartbeat was held past the SDK's 1 s: the test proved nothing")
	}
	calls := 0
	iter := e.c.GetWorkflowHistory(ctx, run.GetID(), run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == activities.CallModelName {
			calls++
		}
	}
	if calls != 1 {
		t.Fatalf("%d model calls for one answer after a heartbeat timed out, want 1", calls)
	}
	if !strings.Contains(res.Text, answer) {
		t.Fatalf("prompt result %q, want the answer", res.Text)
	}
}

// slowBeatProxy forwards a client's unary RPCs to the server, except the
// first heartbeat, which it holds until the client gives up on it (as a
// saturated server does).
type slowBeatProxy struct {
	ln   net.Listener
	srv  *grpc.Server
	cc   *grpc.ClientConn
	held atomic.Int32
}

func startSlowBeatProxy(t *testing.T, target string) *slowBeatProxy {
	t.Helper()
	cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(frameCodec{})))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &slowBeatProxy{ln: ln, cc: cc}
	p.srv = grpc.NewServer(grpc.ForceServerCodec(frameCodec{}), grpc.UnknownServiceHandler(p.forward))
	go func() { _ = p.srv.Serve(ln) }()
	t.Cleanup(func() { p.srv.Stop(); _ = cc.Close() })
	return p
}

func (p *slowBeatProxy) addr() string { return p.ln.Addr().String() }

func (p *slowBeatProxy) forward(_ any, ss grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(ss)
	in := &frame{}
	if err := ss.RecvMsg(in); err != nil {
		return err
	}
	if path.Base(method) == "RecordActivityTaskHeartbeat" && p.held.CompareAndSwap(0, 1) {
		<-ss.Context().Done() // the client's deadline
		return status.Error(codes.DeadlineExceeded, "held by the test proxy")
	}
	md, _ := metadata.FromIncomingContext(ss.Context())
	out := &frame{}
	if err := p.cc.Invoke(metadata.NewOutgoingContext(ss.Context(), md.Copy()), method, in, out); err != nil {
		return err
	}
	return ss.SendMsg(out)
}

// frame is one gRPC message, undecoded; frameCodec passes it through
// (named proto, so the content type does not change).
type frame struct{ b []byte }

type frameCodec struct{}

func (frameCodec) Marshal(v any) ([]byte, error) {
	f, ok := v.(*frame)
	if !ok {
		return nil, errors.New("frameCodec: not a frame")
	}
	return f.b, nil
}

func (frameCodec) Unmarshal(data []byte, v any) error {
	f, ok := v.(*frame)
	if !ok {
		return errors.New("frameCodec: not a frame")
	}
	f.b = append(f.b[:0], data...)
	return nil
}

func (frameCodec) Name() string { return "proto" }
