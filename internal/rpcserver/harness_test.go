package rpcserver_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	sdkclient "go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/rpcserver"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/rpc"
)

// waitTimeout bounds every wait for output; tests never sleep.
const waitTimeout = 10 * time.Second

// harness runs Serve on pipes, as the CLI runs it on stdin and stdout.
type harness struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan rpc.Line
	raw   chan string
	done  chan error
}

func serve(t *testing.T, srv *rpcserver.Server) *harness {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := &harness{t: t, in: inW, lines: make(chan rpc.Line, 256), raw: make(chan string, 256), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		err := srv.Serve(ctx, inR, outW)
		outW.Close()
		h.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			line := sc.Text()
			l, err := rpc.DecodeLine([]byte(line))
			if err != nil {
				t.Errorf("output line is not protocol: %v", err)
				continue
			}
			h.raw <- line
			h.lines <- l
		}
		close(h.lines)
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		inR.Close()
	})
	return h
}

// send writes one raw input line.
func (h *harness) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		h.t.Fatalf("write %q: %v", line, err)
	}
}

// next returns the next output line.
func (h *harness) next() rpc.Line {
	h.t.Helper()
	select {
	case l, ok := <-h.lines:
		if !ok {
			h.t.Fatal("output ended")
		}
		<-h.raw
		return l
	case <-time.After(waitTimeout):
		h.t.Fatal("no output line within the timeout")
	}
	return rpc.Line{}
}

// response returns the next line, which must be a response.
func (h *harness) response() rpc.Response {
	h.t.Helper()
	l := h.next()
	if l.Response == nil {
		h.t.Fatalf("want a response, got event %+v", *l.Event)
	}
	return *l.Response
}

// closeInput closes stdin and waits for Serve to return.
func (h *harness) closeInput() error {
	h.t.Helper()
	h.in.Close()
	select {
	case err := <-h.done:
		return err
	case <-time.After(waitTimeout):
		h.t.Fatal("Serve did not return after stdin closed")
	}
	return nil
}

// offline is the real backend of session s1 with its data in a temporary
// directory and Temporal at an address where nothing listens: what
// `starter rpc` serves when the server is down. Commands that need no
// Temporal (bad lines, get_available_models, get_commands) are answered;
// the others fail with the connection's error within the command
// timeout. The commands of a running prompt are tested against a real
// server in rpc/e2e.
func offline(t testing.TB) *client.Session {
	t.Helper()
	return offlineAt(t, "127.0.0.1:1")
}

// offlineAt is offline with Temporal at addr.
func offlineAt(t testing.TB, addr string) *client.Session {
	t.Helper()
	s := settings.Defaults()
	s.DataDir = t.TempDir()
	s.Temporal.Address = addr
	c, err := sdkclient.NewLazyClient(sdkclient.Options{HostPort: s.Temporal.Address, Namespace: s.Temporal.Namespace,
		Logger: sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	k, err := client.NewController(c, s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := client.Open(k, s, "s1")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
