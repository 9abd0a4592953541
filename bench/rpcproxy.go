package main

// countingProxy is a gRPC pass-through between `starter rpc` processes and
// the embedded server that counts the RPCs by method: the followers run
// in processes of their own (their CPU apart from the server's), so the
// bench cannot put an interceptor on their client. Frames pass as bytes,
// undecoded; metadata, headers and trailers pass too.

import (
	"context"
	"errors"
	"io"
	"net"
	"path"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// rawFrame is one gRPC message, undecoded.
type rawFrame struct{ b []byte }

// rawCodec passes frames through. It names itself proto so that the
// content type of the calls it forwards does not change.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	f, ok := v.(*rawFrame)
	if !ok {
		return nil, errors.New("rawCodec: not a frame")
	}
	return f.b, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	f, ok := v.(*rawFrame)
	if !ok {
		return errors.New("rawCodec: not a frame")
	}
	f.b = append(f.b[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }

type countingProxy struct {
	ln      net.Listener
	srv     *grpc.Server
	backend *grpc.ClientConn
	rpcs    *rpcCounter
}

// startCountingProxy listens on a free loopback port and forwards every
// call to target, counting it in rpcs.
func startCountingProxy(target string, rpcs *rpcCounter) (*countingProxy, error) {
	cc, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{})))
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = cc.Close()
		return nil, err
	}
	p := &countingProxy{ln: ln, backend: cc, rpcs: rpcs}
	p.srv = grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(p.forward))
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Addr is the address clients dial instead of the server's.
func (p *countingProxy) Addr() string { return p.ln.Addr().String() }

func (p *countingProxy) Close() {
	p.srv.Stop()
	_ = p.backend.Close()
}

// forward runs one call against the backend, frames both ways.
func (p *countingProxy) forward(_ any, ss grpc.ServerStream) error {
	method, ok := grpc.MethodFromServerStream(ss)
	if !ok {
		return status.Error(14, "proxy: no method")
	}
	p.rpcs.count(path.Base(method))
	md, _ := metadata.FromIncomingContext(ss.Context())
	ctx, cancel := context.WithCancel(metadata.NewOutgoingContext(ss.Context(), md.Copy()))
	defer cancel()
	cs, err := p.backend.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method)
	if err != nil {
		return err
	}
	sendErr := make(chan error, 1)
	go func() {
		for {
			f := &rawFrame{}
			if err := ss.RecvMsg(f); err != nil {
				if errors.Is(err, io.EOF) {
					sendErr <- cs.CloseSend()
				} else {
					sendErr <- err
				}
				return
			}
			if err := cs.SendMsg(f); err != nil {
				sendErr <- err
				return
			}
		}
	}()
	if h, err := cs.Header(); err == nil {
		_ = ss.SendHeader(h)
	}
	for {
		f := &rawFrame{}
		if err := cs.RecvMsg(f); err != nil {
			ss.SetTrailer(cs.Trailer())
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if err := ss.SendMsg(f); err != nil {
			return err
		}
	}
}
