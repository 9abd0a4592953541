package live

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
)

func newTestHub(t *testing.T) *Hub {
	t.Helper()
	h, err := ListenHub("127.0.0.1:0", HubOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// textOf is the text of block 0 of s and where it starts.
func textOf(s Snapshot) (int, string) {
	if len(s.Blocks) == 0 {
		return 0, ""
	}
	return s.Blocks[0].Offset, s.Blocks[0].Tail
}

// collect subscribes to p and gathers the text the follower sees grow,
// as a Cursor would: every byte once, in order.
func collect(ctx context.Context, p Push) (string, []Snapshot, error) {
	var got strings.Builder
	var snaps []Snapshot
	err := Subscribe(ctx, p, nil, func(s Snapshot, _ time.Time) {
		snaps = append(snaps, s)
		off, tail := textOf(s)
		if have := got.Len(); off+len(tail) > have && off <= have {
			got.WriteString(tail[have-off:])
		}
	})
	return got.String(), snaps, err
}

// A follower of a pushed call gets the whole text as it streams, and the
// stream ends when the call does; the lines carry the new bytes only.
func TestPush_FollowerGetsWholeText(t *testing.T) {
	h := newTestHub(t)
	acc := NewModel("e1", 0)
	p, unpublish := h.Publish(acc)
	var want strings.Builder
	var wg sync.WaitGroup
	var got string
	var snaps []Snapshot
	var err error
	wg.Add(1)
	go func() {
		defer wg.Done()
		got, snaps, err = collect(context.Background(), p)
	}()
	time.Sleep(20 * time.Millisecond)
	for i := range 300 {
		w := fmt.Sprintf("word%d ", i)
		want.WriteString(w)
		acc.Add(llm.Delta{Type: agent.DeltaText, ContentIndex: 0, Delta: w})
		if i%10 == 0 {
			time.Sleep(2 * time.Millisecond)
		}
	}
	unpublish()
	wg.Wait()
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if got != want.String() {
		t.Fatalf("got %d bytes, want %d: %q", len(got), want.Len(), got[:min(len(got), 80)])
	}
	if len(snaps) < 2 {
		t.Fatalf("%d lines: the stream did not follow the changes", len(snaps))
	}
	if last := snaps[len(snaps)-1]; last.EntryID != "e1" || last.Kind != KindModel {
		t.Fatalf("last snapshot %+v", last)
	}
}

// A text longer than a snapshot holds rolls: the rebuilt snapshots are
// bounded as a heartbeat's and end with the call's own last snapshot.
func TestPush_RebuiltSnapshotsBounded(t *testing.T) {
	h := newTestHub(t)
	acc := NewModel("e1", 0)
	p, unpublish := h.Publish(acc)
	done := make(chan []Snapshot)
	go func() {
		_, snaps, _ := collect(context.Background(), p)
		done <- snaps
	}()
	time.Sleep(20 * time.Millisecond)
	chunk := strings.Repeat("é", 500) // 1000 bytes, 2-byte runes
	for range 40 {
		acc.Add(llm.Delta{Type: agent.DeltaText, Delta: chunk})
		time.Sleep(time.Millisecond)
	}
	unpublish()
	snaps := <-done
	for _, s := range snaps {
		if _, tail := textOf(s); len(tail) > MaxSnapshotBytes {
			t.Fatalf("rebuilt snapshot of %d bytes", len(tail))
		}
	}
	off, tail := textOf(snaps[len(snaps)-1])
	wOff, wTail := textOf(acc.Snapshot())
	if off+len(tail) != wOff+len(wTail) || !strings.HasSuffix(wTail, tail[max(0, len(tail)-100):]) {
		t.Fatalf("last rebuilt snapshot ends at %d, the call's at %d", off+len(tail), wOff+len(wTail))
	}
}

// An unknown token, and a call that ended, are refused: a follower then
// reads the heartbeats.
func TestPush_TokenRefused(t *testing.T) {
	h := newTestHub(t)
	acc := NewModel("e1", 0)
	p, unpublish := h.Publish(acc)
	err := Subscribe(context.Background(), Push{URL: h.URL() + "0123456789abcdef0123456789abcdef"}, nil, func(Snapshot, time.Time) {})
	if !errors.Is(err, ErrPushRefused) {
		t.Fatalf("guessed token: %v", err)
	}
	unpublish()
	if err := Subscribe(context.Background(), p, nil, func(Snapshot, time.Time) {}); !errors.Is(err, ErrPushRefused) {
		t.Fatalf("ended call: %v", err)
	}
	if p2, _ := h.Publish(acc); p2.URL == p.URL {
		t.Fatal("two publications share a token")
	}
}

// A client that does not read does not slow the call, and when it reads
// again it gets the latest text (the bytes between in it).
func TestPush_SlowClientDoesNotSlowTheCall(t *testing.T) {
	h := newTestHub(t)
	acc := NewModel("e1", 0)
	p, unpublish := h.Publish(acc)
	conn, err := net.Dial("tcp", strings.TrimPrefix(strings.Split(p.URL, "/live/")[0], "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", p.URL[strings.Index(p.URL, "/live/"):])
	time.Sleep(20 * time.Millisecond)
	// Not reading: each change is a line of 8 KB, far more than socket
	// buffers hold.
	big := strings.Repeat("x", 4000)
	start := time.Now()
	for range 2000 {
		acc.Add(llm.Delta{Type: agent.DeltaText, Delta: big})
		acc.SetUsage(agent.Usage{Output: 1}) // another change
	}
	acc.Add(llm.Delta{Type: agent.DeltaText, Delta: "THE END"})
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("8 MB of deltas took %s with a stuck client", d)
	}
	unpublish()
	// Now read everything: the rebuilt last snapshot ends with the last
	// bytes.
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, maxPushLine)
	d := pushDecoder{}
	var last Snapshot
	lines := 0
	for sc.Scan() {
		var l PushLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		last = d.next(l.Snap)
		lines++
	}
	if _, tail := textOf(last); !strings.HasSuffix(tail, "THE END") || lines > 1000 {
		t.Fatalf("%d lines; the slow client's last snapshot ends %q", lines, tail[max(0, len(tail)-20):])
	}
}

// A follower that goes away frees its stream.
func TestPush_DisconnectFreesStream(t *testing.T) {
	h := newTestHub(t)
	acc := NewModel("e1", 0)
	p, unpublish := h.Publish(acc)
	defer unpublish()
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan struct{}, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- Subscribe(ctx, p, nil, func(Snapshot, time.Time) {
			select {
			case got <- struct{}{}:
			default:
			}
		})
	}()
	<-got
	if n := h.openStreams(); n != 1 {
		t.Fatalf("%d streams open", n)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("subscribe after cancel: %v", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for h.openStreams() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d streams still open after the follower left", h.openStreams())
		}
		acc.Add(llm.Delta{Type: agent.DeltaText, Delta: "x"}) // a write finds the closed connection
		time.Sleep(10 * time.Millisecond)
	}
}

// openStreams is the number of open streams (tests).
func (h *Hub) openStreams() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.streams
}
