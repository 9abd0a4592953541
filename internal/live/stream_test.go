package live

import (
	"encoding/json"
	"github.com/durableagent/durableagent/agent"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/durableagent/durableagent/internal/llm"
)

// chunks cuts s into pieces of 1..max bytes at character boundaries, as a
// provider's stream would.
func chunks(r *rand.Rand, s string, max int) []string {
	var out []string
	for len(s) > 0 {
		n := 1 + r.IntN(max)
		if n >= len(s) {
			out = append(out, s)
			break
		}
		for n < len(s) && !utf8.RuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func tailBytes(s Snapshot) int {
	n := len(s.Output)
	for _, b := range s.Blocks {
		n += len(b.Tail)
	}
	return n
}

// checkBlock: the block's tail is the end of want, at its offset.
func checkBlock(t *testing.T, b Block, want string) {
	t.Helper()
	if b.End() != len(want) {
		t.Fatalf("block %d: offset %d + tail %d = %d, want the whole length %d", b.Index, b.Offset, len(b.Tail), b.End(), len(want))
	}
	if want[b.Offset:] != b.Tail {
		t.Fatalf("block %d: tail is not the text from offset %d", b.Index, b.Offset)
	}
	if !utf8.ValidString(b.Tail) {
		t.Fatalf("block %d: tail cuts a character", b.Index)
	}
}

func TestStreamAccumulator_BoundedForOneMegabyteAnswer(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		sb.WriteString("Größe ∑ line of the answer, with \"quotes\" and ünïcode. ")
	}
	answer := sb.String()
	a := NewModel("a1", 2)
	maxJSON := 0
	for i, c := range chunks(r, answer, 300) {
		a.Add(llm.Delta{Type: agent.DeltaText, ContentIndex: 0, Delta: c})
		if i%50 == 0 {
			s := a.Snapshot()
			if n := tailBytes(s); n > MaxSnapshotBytes {
				t.Fatalf("snapshot carries %d bytes of text, max %d", n, MaxSnapshotBytes)
			}
			b, _ := json.Marshal(s)
			maxJSON = max(maxJSON, len(b))
		}
	}
	s := a.Snapshot()
	if s.Kind != KindModel || s.EntryID != "a1" || s.Attempt != 2 || len(s.Blocks) != 1 {
		t.Fatalf("snapshot header: %+v", s)
	}
	checkBlock(t, s.Blocks[0], answer)
	if len(s.Blocks[0].Tail) < MaxSnapshotBytes-utf8.UTFMax {
		t.Fatalf("tail %d bytes: the budget is not used", len(s.Blocks[0].Tail))
	}
	// JSON escapes the quotes; the heartbeat detail stays near the bound.
	if maxJSON > MaxSnapshotBytes+MaxSnapshotBytes/4 {
		t.Fatalf("snapshot JSON %d bytes for %d bytes of text", maxJSON, MaxSnapshotBytes)
	}
	if c := cap(a.blocks[0].text.buf); c > 4*MaxSnapshotBytes+1024 {
		t.Fatalf("accumulator keeps %d bytes for one block", c)
	}
}

// Blocks: per content index, in order; the latest block gets the budget,
// earlier ones keep their length (Offset) even when no text fits.
func TestStreamAccumulator_OffsetsAcrossBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	thinking := strings.Repeat("think ", 3000) // 18 000 bytes
	call := `{"command":"` + strings.Repeat("x", 2000) + `"}`
	text := strings.Repeat("é", 1500) // 3000 bytes, 2-byte characters

	a := NewModel("a7", 0)
	for _, c := range chunks(r, thinking, 64) {
		a.Add(llm.Delta{Type: agent.DeltaThinking, ContentIndex: 0, Delta: c})
	}
	s := a.Snapshot()
	checkBlock(t, s.Blocks[0], thinking)
	if s.Blocks[0].Offset != len(thinking)-MaxSnapshotBytes {
		t.Fatalf("thinking offset %d, want %d", s.Blocks[0].Offset, len(thinking)-MaxSnapshotBytes)
	}
	// Out of order on purpose: index 2 before index 1.
	for _, c := range chunks(r, text, 7) {
		a.Add(llm.Delta{Type: agent.DeltaText, ContentIndex: 2, Delta: c})
	}
	for i, c := range chunks(r, call, 64) {
		d := llm.Delta{Type: agent.DeltaToolCall, ContentIndex: 1, Delta: c}
		if i == 0 {
			d.ToolCallID, d.ToolName = "call-1", "bash"
		}
		a.Add(d)
	}
	a.Add(llm.Delta{Type: "unknown_delta", ContentIndex: 9, Delta: "ignored"})
	a.SetUsage(agent.Usage{Output: 9000}) // the provider's count, above the estimate

	s = a.Snapshot()
	if len(s.Blocks) != 3 || s.OutputTokens != 9000 {
		t.Fatalf("blocks %+v tokens %d", s.Blocks, s.OutputTokens)
	}
	for i, want := range []struct {
		typ  string
		text string
	}{{agent.BlockThinking, thinking}, {agent.BlockToolCall, call}, {agent.BlockText, text}} {
		b := s.Blocks[i]
		if b.Index != i || b.Type != want.typ {
			t.Fatalf("block %d: index %d type %q, want %q", i, b.Index, b.Type, want.typ)
		}
		checkBlock(t, b, want.text)
	}
	if b := s.Blocks[1]; b.ToolCallID != "call-1" || b.ToolName != "bash" || b.Offset != 0 {
		t.Fatalf("tool call block: %+v", b)
	}
	// text (3000) and call (2016) are whole; thinking gets the rest.
	if got, want := len(s.Blocks[0].Tail), MaxSnapshotBytes-len(text)-len(call); got != want {
		t.Fatalf("thinking tail %d bytes, want the remaining budget %d", got, want)
	}
	if n := tailBytes(s); n > MaxSnapshotBytes {
		t.Fatalf("%d bytes of text, max %d", n, MaxSnapshotBytes)
	}

	// A long last block leaves nothing for the earlier ones.
	for _, c := range chunks(r, strings.Repeat("z", 20000), 500) {
		a.Add(llm.Delta{Type: agent.DeltaText, ContentIndex: 2, Delta: c})
	}
	s = a.Snapshot()
	if s.Blocks[0].Tail != "" || s.Blocks[0].Offset != len(thinking) || s.Blocks[1].Offset != len(call) {
		t.Fatalf("earlier blocks should be sent as their length only: %+v %+v", s.Blocks[0].Offset, s.Blocks[1].Offset)
	}
	checkBlock(t, s.Blocks[2], text+strings.Repeat("z", 20000))
}

func TestStreamAccumulator_ToolOutputTail(t *testing.T) {
	a := NewTool("r1", "call-1", "bash")
	if s := a.Snapshot(); s.Kind != KindTool || s.Output != "" || s.ToolCallID != "call-1" || s.ToolName != "bash" || s.EntryID != "r1" {
		t.Fatalf("empty tool snapshot: %+v", s)
	}
	var all strings.Builder
	for i := range 5000 {
		line := strings.Repeat("ö", i%13) + " output line\n"
		all.WriteString(line)
	}
	a.SetOutput(all.String())
	s := a.Snapshot()
	if len(s.Output) > MaxSnapshotBytes || len(s.Output) < MaxSnapshotBytes-utf8.UTFMax {
		t.Fatalf("output tail %d bytes", len(s.Output))
	}
	if !strings.HasSuffix(all.String(), s.Output) || !utf8.ValidString(s.Output) {
		t.Fatal("output is not the tail of what the tool printed")
	}
	if len(s.Blocks) != 0 {
		t.Fatalf("tool snapshot with blocks: %+v", s.Blocks)
	}
}

func TestStreamSnapshot_JSONNames(t *testing.T) {
	a := NewModel("a1", 1)
	a.Add(llm.Delta{Type: agent.DeltaToolCall, ContentIndex: 0, Delta: "{", ToolCallID: "c", ToolName: "read"})
	b, err := json.Marshal(a.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"model","entryId":"a1","attempt":1,"blocks":[{"index":0,"type":"toolCall","toolCallId":"c","toolName":"read","tail":"{"}],"outputTokens":1}`
	if string(b) != want {
		t.Fatalf("json\n got %s\nwant %s", b, want)
	}
	var back Snapshot
	if err := json.Unmarshal(b, &back); err != nil || back.Blocks[0].ToolName != "read" {
		t.Fatalf("round trip: %+v %v", back, err)
	}
}

// Deltas are added from one goroutine while snapshots are taken from
// others (run with -race); every snapshot is a consistent prefix.
func TestStreamAccumulator_Concurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	text := strings.Repeat("0123456789abcdef", 4096) // 64 KiB
	parts := chunks(r, text, 40)
	a := NewModel("a1", 0)
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range 3 {
		wg.Go(func() {
			last := 0
			for {
				select {
				case <-done:
					return
				default:
				}
				s := a.Snapshot()
				if len(s.Blocks) == 0 {
					continue
				}
				b := s.Blocks[0]
				if b.End() < last || text[b.Offset:b.End()] != b.Tail || len(b.Tail) > MaxSnapshotBytes {
					t.Errorf("inconsistent snapshot: offset %d end %d (last end %d)", b.Offset, b.End(), last)
					return
				}
				last = b.End()
			}
		})
	}
	var adders sync.WaitGroup
	adders.Go(func() {
		for _, p := range parts {
			a.Add(llm.Delta{Type: agent.DeltaText, Delta: p})
		}
	})
	adders.Go(func() {
		for i := range 1000 {
			a.SetUsage(agent.Usage{Output: i})
		}
	})
	adders.Wait()
	close(done)
	wg.Wait()
	checkBlock(t, a.Snapshot().Blocks[0], text)
}

// Output tokens: the provider's count when it reports one, an estimate
// from the streamed bytes until then and while the report lags behind;
// never down.
func TestStreamAccumulator_OutputTokens(t *testing.T) {
	cases := []struct {
		name  string
		steps []any // a string is streamed text, an int a reported count
		want  int
	}{
		{"estimate only: four bytes a token, rounded up", []any{"abcdefghi"}, 3},
		{"nothing streamed, nothing reported", nil, 0},
		{"a report above the estimate wins", []any{"abcd", 50}, 50},
		{"a report below the estimate does not lower it", []any{strings.Repeat("x", 400), 7}, 100},
		{"the estimate grows past an early report", []any{1, strings.Repeat("x", 40)}, 10},
		{"a later smaller report is ignored", []any{80, 20}, 80},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := NewModel("a1", 0)
			for _, st := range c.steps {
				switch v := st.(type) {
				case string:
					a.Add(llm.Delta{Type: agent.DeltaText, Delta: v})
				case int:
					a.SetUsage(agent.Usage{Output: v})
				}
			}
			if got := a.Snapshot().OutputTokens; got != c.want {
				t.Fatalf("output tokens %d, want %d", got, c.want)
			}
		})
	}
}

// Every change is signalled to a watcher, and a burst leaves one signal.
func TestStreamAccumulator_ChangedSignals(t *testing.T) {
	a := NewModel("a1", 0)
	changed, stop := a.Watch()
	defer stop()
	select {
	case <-changed:
		t.Fatal("signal before any change")
	default:
	}
	for range 5 {
		a.Add(llm.Delta{Type: agent.DeltaText, Delta: "x"})
	}
	<-changed
	select {
	case <-changed:
		t.Fatal("a burst left more than one signal")
	default:
	}
	a.Add(llm.Delta{Type: "unknown", Delta: "x"})
	select {
	case <-changed:
		t.Fatal("an ignored delta signalled a change")
	default:
	}
	tool := NewTool("r1", "c1", "bash")
	toolChanged, stopTool := tool.Watch()
	defer stopTool()
	tool.SetOutput("out")
	<-toolChanged
}

// Issue 24: a model snapshot carries the usage so far: the provider's
// input and cache counts (each the largest reported: a later report
// that leaves them out does not take them back), the output token
// count, and its cost at the model's prices; a cursor hands it to the
// client with the deltas.
func TestStreamAccumulator_UsageSoFar(t *testing.T) {
	a := NewModel("e1", 0)
	if s := a.Snapshot(); s.Usage != nil {
		t.Fatalf("usage before any report: %+v", s.Usage)
	}
	a.SetPrice(agent.ModelCost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75})
	a.SetUsage(agent.Usage{Input: 1000, Output: 1, CacheRead: 2000, CacheWrite: 400})
	a.Add(llm.Delta{Type: agent.DeltaText, Delta: "Hello"})
	a.SetUsage(agent.Usage{Output: 100}) // message_delta: output only
	s := a.Snapshot()
	want := agent.Usage{Input: 1000, Output: 100, CacheRead: 2000, CacheWrite: 400}.Priced(agent.ModelCost{Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75})
	if s.Usage == nil || *s.Usage != want || s.OutputTokens != 100 {
		t.Fatalf("snapshot usage %+v (output tokens %d), want %+v", s.Usage, s.OutputTokens, want)
	}
	if want.Cost.Total != 0.0066 || want.TotalTokens != 3500 {
		t.Fatalf("priced usage %+v: want $0.0066 for 3500 tokens", want)
	}
	evs := NewCursor().Diff(s)
	if len(evs) != 1 || evs[0].AssistantMessageEvent.Usage == nil || *evs[0].AssistantMessageEvent.Usage != want {
		t.Fatalf("live events %+v, want one delta with the usage so far", evs)
	}
}
