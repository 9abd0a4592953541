package integration

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/codec"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/internal/settings"
)

// wireRecorder keeps every byte its connections read.
type wireRecorder struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

type recordedConn struct {
	net.Conn
	r *wireRecorder
}

func (c recordedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.r.mu.Lock()
	c.r.buf.Write(p[:n])
	c.r.mu.Unlock()
	return n, err
}

func (r *wireRecorder) bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.buf.Bytes())
}

// recordPushWire makes the followers' plain-HTTP push client record the
// bytes it reads off the wire, until the test ends.
func recordPushWire(t *testing.T) *wireRecorder {
	rec := &wireRecorder{}
	d := &net.Dialer{Timeout: 2 * time.Second}
	old := live.PushClient
	live.PushClient = &http.Client{Transport: &http.Transport{
		ResponseHeaderTimeout: 2 * time.Second,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return recordedConn{Conn: c, r: rec}, nil
		},
	}}
	t.Cleanup(func() { live.PushClient = old })
	return rec
}

// withCodecKey gives e a payload codec key, and a client and worker
// dialled with it.
func withCodecKey(t *testing.T, e *env) {
	keyFile := filepath.Join(t.TempDir(), "codec.key")
	if err := os.WriteFile(keyFile, bytes.Repeat([]byte{0x42}, codec.KeySize), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(settings.EnvCodecKey, "")
	e.s.Codec.KeyFile, e.s.Codec.KeyID = keyFile, "push-key"
	e.c.Close()
	e.startServer() // dials again, with the codec
}

// followWithCodec follows session with the client's codec and returns
// the live text it got and the snapshots push streams brought.
func followWithCodec(t *testing.T, e *env, session string) (string, int64) {
	t.Helper()
	k, err := client.NewController(e.c, e.s)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	before := client.PushedSnapshots()
	var text strings.Builder
	var ended bool
	if _, err := k.Follow(ctx, session, "", 0, func(ev agent.Event) {
		switch {
		case ev.Type == agent.EventMessageUpdate && ev.AssistantMessageEvent.Type == agent.DeltaText:
			text.WriteString(ev.AssistantMessageEvent.Delta)
		case ev.Type == agent.EventPromptEnd:
			ended = true
		}
	}); err != nil || !ended {
		t.Fatalf("follow %s: %v (prompt_end seen: %v)", session, err, ended)
	}
	return text.String(), client.PushedSnapshots() - before
}

// Spec 13.10.9: with a payload codec key, the worker still pushes live
// output, each line sealed with the codec: a follower with the key gets
// the whole text by push, and the bytes on the wire hold none of it.
func TestIntegration_LivePushSealedWithCodec(t *testing.T) {
	e, answer := streamingEnv(t)
	withCodecKey(t, e)
	rec := recordPushWire(t)
	e.s.Stream.Push = "127.0.0.1:0" // loopback: plain HTTP (stream.pushTLS auto)
	e.startWorker()
	e.prompt("push-sealed")
	text, pushed := followWithCodec(t, e, "push-sealed")
	if text != answer || pushed < 10 {
		t.Fatalf("live text %q (want the answer) from %d pushed snapshots (want the stream)", text, pushed)
	}
	wire := rec.bytes()
	t.Logf("%d snapshots pushed, %d bytes on the wire", pushed, len(wire))
	if !bytes.Contains(wire, []byte(`{"sealed":"`)) || len(wire) < 1000 {
		t.Fatalf("the wire held no sealed line: %.300s", wire)
	}
	if bytes.Contains(wire, []byte("pushed word")) || bytes.Contains(wire, []byte(`"snap"`)) {
		t.Fatalf("the wire holds live output in clear: %.300s", wire)
	}
}

// Spec 13.10.9: with stream.pushTLS on, the worker pushes over HTTPS with
// a self-signed certificate whose fingerprint the heartbeat details
// carry; a follower pins it and gets the whole text by push (here with
// the codec too).
func TestIntegration_LivePushTLSPinned(t *testing.T) {
	e, answer := streamingEnv(t)
	withCodecKey(t, e)
	rec := recordPushWire(t) // the pinned client is another: nothing here
	e.s.Stream.Push, e.s.Stream.PushTLS = "127.0.0.1:0", settings.PushTLSOn
	e.startWorker()
	e.prompt("push-tls")
	text, pushed := followWithCodec(t, e, "push-tls")
	if text != answer || pushed < 10 {
		t.Fatalf("live text %q (want the answer) from %d pushed snapshots (want the stream)", text, pushed)
	}
	if n := len(rec.bytes()); n != 0 {
		t.Fatalf("%d bytes came by plain HTTP with stream.pushTLS on", n)
	}
}
