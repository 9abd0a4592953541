package client

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/codec"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/internal/llm"
)

// waitStream waits until the stream of call ended, or brought a snapshot.
func waitStream(t *testing.T, p *pushReader, call string) *pushStream {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.mu.Lock()
		st := p.streams[call]
		done := st.over || st.open
		p.mu.Unlock()
		if done {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatal("the stream neither opened nor ended")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Spec 13.10.9: a reader follows a hub that serves HTTPS and seals its
// lines when it has the worker's codec key and the certificate's
// fingerprint; a certificate other than the one the heartbeat details
// name, or a client without the key, fails the stream and leaves the
// reader on the heartbeats (not streaming, nothing taken from it).
func TestPushReader_PinnedSealedOrFallsBack(t *testing.T) {
	k, err := codec.NewKey("k1", bytes.Repeat([]byte{3}, codec.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	dc := codec.New(k).DataConverter()
	hub, err := live.ListenHub("127.0.0.1:0", live.HubOptions{TLS: true, Converter: dc})
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	acc := live.NewModel("a1", 0)
	acc.Add(llm.Delta{Type: agent.DeltaText, Delta: "pushed over TLS"})
	push, unpublish := hub.Publish(acc)
	defer unpublish()

	cases := []struct {
		name string
		push live.Push
		key  bool
		want error // nil: the stream brings the text
	}{
		{name: "pinned and sealed", push: push, key: true},
		{name: "wrong fingerprint", push: live.Push{URL: push.URL, CertSHA256: strings.Repeat("0", 64), Sealed: true}, key: true, want: live.ErrPushCertMismatch},
		{name: "no codec key", push: push, want: live.ErrPushSealed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var key converter.DataConverter
			if tc.key {
				key = dc
			}
			r := newPushReader(&reader{}, key)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r.observe(ctx, []live.Stamped{{Snapshot: live.Snapshot{Kind: live.KindModel, EntryID: "a1", Push: &tc.push}, Call: "5"}})
			st := waitStream(t, r, "5")
			if tc.want == nil {
				got, _ := r.take()
				if !r.streaming() || len(got) != 1 || got[0].Blocks[0].Tail != "pushed over TLS" {
					t.Fatalf("streaming %v, took %+v", r.streaming(), got)
				}
				return
			}
			r.mu.Lock()
			serr := st.err
			r.mu.Unlock()
			if got, _ := r.take(); !errors.Is(serr, tc.want) || r.streaming() || len(got) != 0 {
				t.Fatalf("stream error %v (want %v), streaming %v", serr, tc.want, r.streaming())
			}
		})
	}
}
