package live

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/codec"
	"github.com/durableagent/durableagent/internal/llm"
)

// codecConverter is the data converter of a codec whose key id is id and
// whose key is 32 bytes of b: what a worker or client with codec.keyFile
// uses.
func codecConverter(t *testing.T, id string, b byte) converter.DataConverter {
	t.Helper()
	k, err := codec.NewKey(id, bytes.Repeat([]byte{b}, codec.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return codec.New(k).DataConverter()
}

func newHubWith(t *testing.T, o HubOptions) *Hub {
	t.Helper()
	h, err := ListenHub("127.0.0.1:0", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// streamWords publishes n words to a fresh call of h, following it with
// follow, and returns the text the call wrote and follow's result.
func streamWords(t *testing.T, h *Hub, n int, follow func(Push) (string, error)) (string, string, error) {
	t.Helper()
	acc := NewModel("e1", 0)
	p, unpublish := h.Publish(acc)
	type res struct {
		got string
		err error
	}
	done := make(chan res, 1)
	go func() {
		got, err := follow(p)
		done <- res{got, err}
	}()
	time.Sleep(30 * time.Millisecond)
	var want strings.Builder
	for i := range n {
		w := fmt.Sprintf("secretword%d ", i)
		want.WriteString(w)
		acc.Add(llm.Delta{Type: agent.DeltaText, Delta: w})
		if i%10 == 0 {
			time.Sleep(2 * time.Millisecond)
		}
	}
	unpublish()
	select {
	case r := <-done:
		return want.String(), r.got, r.err
	case <-time.After(10 * time.Second):
		t.Fatal("the follower did not end with the call")
		return "", "", nil
	}
}

// followWith follows p opening its lines with dc, as a Cursor would:
// every byte once, in order.
func followWith(dc converter.DataConverter) func(Push) (string, error) {
	return func(p Push) (string, error) {
		var got strings.Builder
		err := Subscribe(context.Background(), p, dc, func(s Snapshot, _ time.Time) {
			off, tail := textOf(s)
			if have := got.Len(); off+len(tail) > have && off <= have {
				got.WriteString(tail[have-off:])
			}
		})
		return got.String(), err
	}
}

// Spec 13.10.9: with the worker's payload codec, each pushed line is
// sealed; a follower with the same key gets the whole text, and the
// bytes on the wire hold none of it.
func TestPushCodec_RoundTripNothingInClear(t *testing.T) {
	dc := codecConverter(t, "k1", 1)
	h := newHubWith(t, HubOptions{Converter: dc})
	want, got, err := streamWords(t, h, 200, followWith(dc))
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if got != want {
		t.Fatalf("follower got %d bytes, want %d", len(got), len(want))
	}

	// The raw stream: sealed lines only, no word in clear.
	var raw []byte
	want, _, _ = streamWords(t, h, 50, func(p Push) (string, error) {
		if !p.Sealed {
			return "", errors.New("the push of a hub with a codec does not say sealed")
		}
		resp, err := http.Get(p.URL)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		raw, err = io.ReadAll(resp.Body)
		return "", err
	})
	if len(raw) == 0 || !strings.Contains(want, "secretword7 ") {
		t.Fatalf("read %d bytes of the stream", len(raw))
	}
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if !strings.HasPrefix(l, `{"sealed":"`) {
			t.Fatalf("a line not sealed: %.80s", l)
		}
	}
	if bytes.Contains(raw, []byte("secretword")) || bytes.Contains(raw, []byte(`"snap"`)) {
		t.Fatalf("the sealed stream holds text in clear: %.200s", raw)
	}
}

// Spec 13.10.9: a follower without the worker's codec key, or with
// another key, gets one error line naming the problem, and never a
// snapshot of garbage; a sealed push whose lines come in clear is
// refused.
func TestPushCodec_WrongKeyRefused(t *testing.T) {
	h := newHubWith(t, HubOptions{Converter: codecConverter(t, "k1", 1)})
	cases := []struct {
		name string
		dc   converter.DataConverter
	}{
		{"no codec", nil},
		{"another key, same id", codecConverter(t, "k1", 2)},
		{"another key id", codecConverter(t, "k2", 1)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, got, err := streamWords(t, h, 20, followWith(tc.dc))
			if !errors.Is(err, ErrPushSealed) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line of ErrPushSealed", err)
			}
			if got != "" {
				t.Fatalf("follower without the key saw %q", got)
			}
			t.Log(err)
		})
	}

	clear := newTestHub(t)
	_, got, err := streamWords(t, clear, 20, func(p Push) (string, error) {
		p.Sealed = true // as if the heartbeat details said so
		return followWith(codecConverter(t, "k1", 1))(p)
	})
	if !errors.Is(err, ErrPushSealed) || got != "" {
		t.Fatalf("clear lines on a sealed push: %q, %v", got, err)
	}
}

// Spec 13.10.9: a hub with TLS serves HTTPS with a self-signed
// certificate whose fingerprint is in the Push; a follower pins it and
// gets the whole text, sealed lines too.
func TestPushTLS_PinnedSelfSigned(t *testing.T) {
	dc := codecConverter(t, "k1", 1)
	for _, o := range []HubOptions{{TLS: true}, {TLS: true, Converter: dc}} {
		h := newHubWith(t, o)
		if !strings.HasPrefix(h.URL(), "https://127.0.0.1:") {
			t.Fatalf("hub URL %s", h.URL())
		}
		want, got, err := streamWords(t, h, 200, func(p Push) (string, error) {
			if len(p.CertSHA256) != 64 {
				return "", fmt.Errorf("push %+v names no certificate", p)
			}
			return followWith(o.Converter)(p)
		})
		if err != nil || got != want {
			t.Fatalf("sealed %v: got %d bytes of %d, %v", o.Converter != nil, len(got), len(want), err)
		}
	}
	// Without the pin, the standard client does not trust the
	// self-signed certificate.
	h := newHubWith(t, HubOptions{TLS: true})
	p, unpublish := h.Publish(NewModel("e1", 0))
	defer unpublish()
	if resp, err := PushClient.Get(p.URL); err == nil {
		resp.Body.Close()
		t.Fatal("a self-signed hub was trusted without its fingerprint")
	}
}

// Spec 13.10.9: a configured certificate is served as is, and the Push
// names its fingerprint.
func TestPushTLS_ConfiguredCert(t *testing.T) {
	cert, err := SelfSignedCert("worker.example")
	if err != nil {
		t.Fatal(err)
	}
	h := newHubWith(t, HubOptions{TLS: true, Cert: &cert})
	want, got, err := streamWords(t, h, 50, func(p Push) (string, error) {
		if p.CertSHA256 != CertFingerprint(cert.Certificate[0]) {
			return "", fmt.Errorf("push pins %s, not the configured certificate", p.CertSHA256)
		}
		return followWith(nil)(p)
	})
	if err != nil || got != want {
		t.Fatalf("got %d bytes of %d, %v", len(got), len(want), err)
	}
	if _, err := ListenHub("127.0.0.1:0", HubOptions{TLS: true, Cert: &tls.Certificate{}}); err == nil {
		t.Fatal("an empty certificate was served")
	}
}

// Spec 13.10.9: a certificate other than the one the heartbeat details
// name is refused: the stream fails with ErrPushCertMismatch and brings
// nothing (the follower reads the heartbeats).
func TestPushTLS_WrongFingerprintRefused(t *testing.T) {
	h := newHubWith(t, HubOptions{TLS: true})
	_, got, err := streamWords(t, h, 20, func(p Push) (string, error) {
		p.CertSHA256 = strings.Repeat("ab", 32)
		return followWith(nil)(p)
	})
	if !errors.Is(err, ErrPushCertMismatch) || got != "" {
		t.Fatalf("wrong fingerprint: %q, %v", got, err)
	}
	t.Log(err)
}
